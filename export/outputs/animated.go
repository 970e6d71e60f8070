package outputs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
)

// The rule for NAME.animated.glb: a skinned mesh whose format takes
// animations from files beside it (decode.Animator: UNIGINE's .anim) is
// offered with those animations attached when at least one animation file
// of its own folder belongs to its skeleton: every joint the file animates
// is a joint of the mesh's skeleton, by name (decode.Attach). Every such
// file is attached, in file name order, as one animation named after the
// file (its name without the extension). A file that does not decode
// attaches nothing (its own folder shows why). The output reads several
// files, so a change of any animation file in the folder is a change of it
// (formats.IsDependency).

// AnimatedGLBName is the name of the mesh with its folder's animations.
func (m *Mesh) AnimatedGLBName() string { return m.Base + ".animated.glb" }

// TakesAnimations reports whether m's format takes animations from files
// beside its meshes (decode.Animator): only then can NAME.animated.glb be.
func (m *Mesh) TakesAnimations() bool {
	_, ok := m.Format.(decode.Animator)
	return ok
}

// animationFiles lists, in name order, the files of m's folder that m's
// format names as animation files; none for a format that takes none.
func (m *Mesh) animationFiles() ([]string, error) {
	an, ok := m.Format.(decode.Animator)
	if !ok {
		return nil, nil
	}
	var names []string
	if m.mem != nil {
		for n := range m.mem {
			names = append(names, n)
		}
	} else {
		ents, err := m.Limits.view().ReadDir(filepath.Dir(m.Path))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
	}
	self := filepath.Base(m.Path)
	var out []string
	for _, n := range names {
		if n != self && an.IsAnimationFile(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// sibling describes the file called name beside m, sniffed, or nil when
// no format claims it.
func (m *Mesh) sibling(name string) *Mesh {
	path := filepath.Join(filepath.Dir(m.Path), name)
	r, size, done, err := m.openFile(path)
	if err != nil {
		return nil
	}
	head := make([]byte, min(size, formats.HeadSize))
	n, _ := r.ReadAt(head, 0)
	done()
	f := formats.Sniff(name, head[:n])
	if f == nil {
		return nil
	}
	s := New(path, f)
	s.Limits, s.mem = m.Limits, m.mem
	return s
}

// attach adds to scene the animations of every animation file of m's
// folder that belongs to its skeleton (the rule above) and returns those
// files' names.
func (m *Mesh) attach(ctx context.Context, scene *decode.Scene) ([]string, error) {
	if scene == nil || scene.Skeleton == nil || len(scene.Meshes) == 0 {
		return nil, nil
	}
	files, err := m.animationFiles()
	if err != nil || len(files) == 0 {
		return nil, err
	}
	var attached []string
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := m.sibling(name)
		if s == nil {
			continue
		}
		anim, err := s.decode(ctx)
		if err != nil || len(anim.Meshes) > 0 {
			continue
		}
		if decode.Attach(scene, anim, s.Base) {
			attached = append(attached, name)
		}
	}
	return attached, nil
}

// Animations returns the animation files NAME.animated.glb attaches, in
// name order; none means the folder does not hold NAME.animated.glb. It
// decodes the mesh only when its folder holds animation files.
func (m *Mesh) Animations(ctx context.Context) ([]string, error) {
	files, err := m.animationFiles()
	if err != nil || len(files) == 0 {
		return nil, err
	}
	ctx, finish := m.deadline(ctx, "decode and attach animations")
	scene, err := m.decode(ctx)
	if err != nil {
		return nil, finish(err)
	}
	names, err := m.attach(ctx, scene)
	return names, finish(err)
}

// errNoAnimations is AnimatedGLBFile's error for a mesh no animation file
// belongs to: the file is not in the folder.
var errNoAnimations = fmt.Errorf("no animation file of the folder belongs to the mesh's skeleton: %w", os.ErrNotExist)

// AnimatedGLBFile decodes m, attaches its folder's animations and exports
// NAME.animated.glb, failing as error.txt records it; a mesh no animation
// belongs to gets an error that is os.ErrNotExist.
func (m *Mesh) AnimatedGLBFile(ctx context.Context) (b []byte, err error) {
	ctx, finish := m.deadline(ctx, "decode, attach animations and glb export")
	defer func() { err = finish(err) }()
	scene, err := m.decode(ctx)
	if err != nil {
		return nil, err
	}
	return m.animatedGLBOf(ctx, scene)
}

// animatedGLBOf attaches the folder's animations to scene (which it
// changes) and exports NAME.animated.glb.
func (m *Mesh) animatedGLBOf(ctx context.Context, scene *decode.Scene) ([]byte, error) {
	names, err := m.attach(ctx, scene)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: %w", m.Path, errNoAnimations)
	}
	b, err := GLB(scene)
	if err != nil {
		return nil, fmt.Errorf("%s: animated glb export: %w", m.Path, err)
	}
	if err := m.checkOutput(m.AnimatedGLBName(), int64(len(b))); err != nil {
		return nil, err
	}
	return b, nil
}
