package gem

import (
	"math"

	"github.com/meshfs/meshfs/decode"
)

// UnitsPerMetre is GEM's length unit: 20 units are one metre, Gates of
// Hell's documented unit, which the Centurion's assembled hull confirms
// against the real tank's size (TestUnits).
const UnitsPerMetre = 20

// MetresPerUnit is the factor from GEM units to metres.
const MetresPerUnit = 1.0 / UnitsPerMetre

// gemFrame is a bone or key transform in GEM's own space, as the files
// store it: rows[i] is where local axis i goes (Direct3D's row vectors,
// v' = v·M), T the translation. The same rows are the columns of the
// matrix in the column-vector convention.
type gemFrame struct {
	Rows [3][3]float64
	T    [3]float64
}

func identityFrame() gemFrame {
	return gemFrame{Rows: [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}
}

// sceneMatrix converts a GEM frame to the scene's convention the way the
// .ply decoder converts positions, (x, y, z) → (x, z, y) (C, a mirror):
// the matrix becomes C·M·C⁻¹, and its translation is multiplied by scale.
// A mirrored frame (negative determinant) stays mirrored.
func (g gemFrame) sceneMatrix(scale float64) decode.Mat4 {
	swap := [3]int{0, 2, 1}
	var m decode.Mat4
	for col := 0; col < 3; col++ {
		for row := 0; row < 3; row++ {
			// Column col of M is Rows[col]; C permutes both indices.
			m[col*4+row] = g.Rows[swap[col]][swap[row]]
		}
	}
	m[12], m[13], m[14] = g.T[0]*scale, g.T[2]*scale, g.T[1]*scale
	m[15] = 1
	return m
}

// det is the determinant of the frame's 3×3 part.
func (g gemFrame) det() float64 {
	r := g.Rows
	return r[0][0]*(r[1][1]*r[2][2]-r[1][2]*r[2][1]) -
		r[0][1]*(r[1][0]*r[2][2]-r[1][2]*r[2][0]) +
		r[0][2]*(r[1][0]*r[2][1]-r[1][1]*r[2][0])
}

// gemQuat completes a stored rotation (x, y, z; w ≥ 0 implied) to a unit
// quaternion x, y, z, w. Components whose squares sum past 1 (rounding)
// give w = 0 and are normalised.
func gemQuat(v [3]float32) [4]float64 {
	x, y, z := float64(v[0]), float64(v[1]), float64(v[2])
	w := math.Sqrt(math.Max(0, 1-x*x-y*y-z*z))
	n := math.Sqrt(x*x + y*y + z*z + w*w)
	if !(n > 1e-12) {
		return [4]float64{0, 0, 0, 1}
	}
	return [4]float64{x / n, y / n, z / n, w / n}
}

// sceneQuat conjugates a GEM rotation by C (the (x, y, z) → (x, z, y)
// mirror): C·R·C⁻¹ turns about C·axis by the opposite angle, which is the
// quaternion (−x, −z, −y, w).
func sceneQuat(q [4]float64) [4]float64 { return [4]float64{-q[0], -q[2], -q[1], q[3]} }

// quatRows returns the rotation's rows in GEM's row-vector form: row i is
// where axis i goes (column i of the column-vector matrix).
func quatRows(q [4]float64) [3][3]float64 {
	x, y, z, w := q[0], q[1], q[2], q[3]
	// Column-vector matrix R[r][c]; rows of the file are its columns.
	R := [3][3]float64{
		{1 - 2*(y*y+z*z), 2 * (x*y - w*z), 2 * (x*z + w*y)},
		{2 * (x*y + w*z), 1 - 2*(x*x+z*z), 2 * (y*z - w*x)},
		{2 * (x*z - w*y), 2 * (y*z + w*x), 1 - 2*(x*x+y*y)},
	}
	var rows [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			rows[i][j] = R[j][i]
		}
	}
	return rows
}
