package meshgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// meshNameRE finds the GUIDs scenes name meshes by.
var meshNameRE = regexp.MustCompile(`<mesh_name>\s*guid://([0-9a-fA-F]{40})\s*</mesh_name>`)

// UnigineMissingMeshes completes a copy of a UNIGINE project's data folder:
// for every guid://<hex> a .world or .node beneath data names in a
// <mesh_name> that resolves to no file of the project (guid.Scan), it
// writes a mesh of about triangles triangles (Unigine) as the runtime
// data/.runtimes/<2 hex>/<hex>.mesh, and returns the GUIDs written, in
// the order first named.
func UnigineMissingMeshes(data string, triangles int) ([]string, error) {
	ix, err := guid.Scan(data, decodetest.DirFiles{Root: data})
	if err != nil {
		return nil, err
	}
	var missing []string
	seen := map[string]bool{}
	err = filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext != ".world" && ext != ".node" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range meshNameRE.FindAllSubmatch(b, -1) {
			g := strings.ToLower(string(m[1]))
			if _, _, ok := ix.Resolve(g); ok || seen[g] {
				continue
			}
			seen[g] = true
			missing = append(missing, g)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, g := range missing {
		b, err := Unigine(triangles, float32(i))
		if err != nil {
			return nil, err
		}
		p := filepath.Join(data, guid.RuntimesDir, g[:2], g+".mesh")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// UnigineProject writes a UNIGINE data folder at data of n props, as the
// editor lays them out: props/fNN/pNNNN.fbx (a stand-in) with its XML
// .meta, its runtime mesh (a real one of about triangles triangles) in
// .runtimes/ with a JSON .meta, and a .mat per prop named by GUID from
// the .meta beside it; 2n+n .meta files, ignoring the world's. A world,
// data/level.world, places every prop by GUID with its material, on a
// grid 2 m apart. It returns the world's path.
func UnigineProject(data string, n, triangles int) (string, error) {
	mesh, err := Unigine(triangles, 1)
	if err != nil {
		return "", err
	}
	put := func(rel string, b []byte) error {
		p := filepath.Join(data, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	}
	var world strings.Builder
	world.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<world version=\"2.15.0.1\">\n\t<editor>\n")
	for i := range n {
		src := fmt.Sprintf("%02x%038x", i%256, i)
		rt := fmt.Sprintf("%02x%038x", (i+7)%256, i+1<<20)
		mat := fmt.Sprintf("%02x%038x", (i+13)%256, i+2<<20)
		rel := fmt.Sprintf("props/f%02d/p%04d", i%50, i)
		files := []struct {
			rel  string
			body []byte
		}{
			{rel + ".fbx", []byte("fbx")},
			{rel + ".fbx.meta", []byte(xmlMeta(src, rt))},
			{".runtimes/" + rt[:2] + "/" + rt + ".mesh", mesh},
			{".runtimes/" + rt[:2] + "/" + rt + ".mesh.meta", []byte(fmt.Sprintf("{\n\t\"asset\": %q,\n\t\"alias\": \"p.mesh\",\n\t\"primary\": 1\n}\n", src))},
			{rel + ".mat", []byte(fmt.Sprintf("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<material version=\"2.15.0.1\">\n\t<parameter name=\"albedo_color\">%g 0.5 0.5 1</parameter>\n</material>\n", float64(i%10)/10))},
			{rel + ".mat.meta", []byte(xmlMeta(mat))},
		}
		for _, f := range files {
			if err := put(f.rel, f.body); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(&world, "\t\t<node type=\"ObjectMeshStatic\" id=\"%d\" name=\"prop_%04d\">\n\t\t\t<mesh_name>guid://%s</mesh_name>\n\t\t\t<surface name=\"ground\" material=\"%s\"/>\n\t\t\t<transform>1 0 0 0.0 0 1 0 0.0 0 0 1 0.0 %d %d 0 1.0</transform>\n\t\t</node>\n",
			i+1, i, rt, mat, 2*(i%40), 2*(i/40))
	}
	world.WriteString("\t</editor>\n</world>\n")
	if err := put("level.world", []byte(world.String())); err != nil {
		return "", err
	}
	return filepath.Join(data, "level.world"), nil
}

// xmlMeta is an editor's .meta of a source asset with GUID id and the
// runtimes made from it.
func xmlMeta(id string, runtimes ...string) string {
	s := "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<asset version=\"2.15.0.1\">\n\t<guid>" + id + "</guid>\n\t<type>x</type>\n\t<runtimes>\n"
	for _, r := range runtimes {
		s += "\t\t<runtime id=\"" + r + "\" name=\"r\" link=\"1\"/>\n"
	}
	return s + "\t</runtimes>\n</asset>\n"
}
