package meshgen

import (
	"fmt"

	"github.com/meshfs/meshfs/decode/tfever"
)

// TFever returns a Transport Fever .msh script and its .msh.blob
// companion: one triangle whose coordinates depend on seed.
func TFever(seed float32) (script, blob []byte, err error) {
	script, blob, err = tfever.EncodeMsh(&tfever.EncMesh{
		Attrs: []tfever.EncAttr{{Name: "position", NumComp: 3, Data: []float32{seed, 0, 0, 1, 0, 0, 0, 1, seed}}},
		SubMeshes: []tfever.EncSubMesh{{
			Indices:   map[string][]uint32{"position": {0, 1, 2}},
			Materials: []string{"a.mtl"},
		}},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("meshgen: %w", err)
	}
	return script, blob, nil
}
