module github.com/meshfs/meshfs

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/ftrvxmtrx/tga v0.0.0-20150524081124-bd8e8d5be13a
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/maypok86/otter/v2 v2.4.0
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/qmuntal/gltf v0.29.0
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/spf13/cobra v1.10.2
	github.com/woozymasta/bcn v0.7.0
	github.com/yuin/gopher-lua v1.1.2
	go.uber.org/goleak v1.3.0
	golang.org/x/image v0.34.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
