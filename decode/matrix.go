package decode

import "math"

// Mat4 is a column-major 4×4 matrix in float64, for composing joint
// transforms without float32 rounding.
type Mat4 [16]float64

// Identity4 is the matrix that changes nothing.
func Identity4() Mat4 { return Mat4{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1} }

// Det3 is the determinant of m's 3×3 part: negative when m mirrors.
func (m Mat4) Det3() float64 {
	return m[0]*(m[5]*m[10]-m[9]*m[6]) - m[4]*(m[1]*m[10]-m[9]*m[2]) + m[8]*(m[1]*m[6]-m[5]*m[2])
}

// Matrix is t as a matrix: translation · rotation · scale.
func (t TRS) Matrix() Mat4 {
	x, y, z, w := float64(t.Rotation[0]), float64(t.Rotation[1]), float64(t.Rotation[2]), float64(t.Rotation[3])
	sx, sy, sz := float64(t.Scale[0]), float64(t.Scale[1]), float64(t.Scale[2])
	return Mat4{
		(1 - 2*(y*y+z*z)) * sx, 2 * (x*y + w*z) * sx, 2 * (x*z - w*y) * sx, 0,
		2 * (x*y - w*z) * sy, (1 - 2*(x*x+z*z)) * sy, 2 * (y*z + w*x) * sy, 0,
		2 * (x*z + w*y) * sz, 2 * (y*z - w*x) * sz, (1 - 2*(x*x+y*y)) * sz, 0,
		float64(t.Translation[0]), float64(t.Translation[1]), float64(t.Translation[2]), 1,
	}
}

// Mul returns a·b.
func (a Mat4) Mul(b Mat4) (m Mat4) {
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			var s float64
			for k := 0; k < 4; k++ {
				s += a[k*4+r] * b[c*4+k]
			}
			m[c*4+r] = s
		}
	}
	return m
}

// InverseAffine inverts a matrix whose last row is (0, 0, 0, 1); ok is
// false when its 3×3 part is singular.
func (m Mat4) InverseAffine() (inv Mat4, ok bool) {
	a, b, c := m[0], m[4], m[8]
	d, e, f := m[1], m[5], m[9]
	g, h, i := m[2], m[6], m[10]
	det := a*(e*i-f*h) - b*(d*i-f*g) + c*(d*h-e*g)
	if !(math.Abs(det) > 1e-30) {
		return inv, false
	}
	r := 1 / det
	// Rows of the inverse 3×3, stored column-major.
	inv[0], inv[4], inv[8] = (e*i-f*h)*r, (c*h-b*i)*r, (b*f-c*e)*r
	inv[1], inv[5], inv[9] = (f*g-d*i)*r, (a*i-c*g)*r, (c*d-a*f)*r
	inv[2], inv[6], inv[10] = (d*h-e*g)*r, (b*g-a*h)*r, (a*e-b*d)*r
	tx, ty, tz := m[12], m[13], m[14]
	inv[12] = -(inv[0]*tx + inv[4]*ty + inv[8]*tz)
	inv[13] = -(inv[1]*tx + inv[5]*ty + inv[9]*tz)
	inv[14] = -(inv[2]*tx + inv[6]*ty + inv[10]*tz)
	inv[15] = 1
	return inv, true
}

// TRS splits an affine matrix into translation, rotation and scale (any
// shear is dropped; a mirroring matrix gets a negative x scale).
func (m Mat4) TRS() TRS {
	t := TRS{Translation: [3]float32{float32(m[12]), float32(m[13]), float32(m[14])}}
	var cols [3][3]float64
	for c := 0; c < 3; c++ {
		v := [3]float64{m[c*4], m[c*4+1], m[c*4+2]}
		s := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
		if s < 1e-12 {
			s = 1
		}
		t.Scale[c] = float32(s)
		cols[c] = [3]float64{v[0] / s, v[1] / s, v[2] / s}
	}
	det := cols[0][0]*(cols[1][1]*cols[2][2]-cols[2][1]*cols[1][2]) - cols[1][0]*(cols[0][1]*cols[2][2]-cols[2][1]*cols[0][2]) + cols[2][0]*(cols[0][1]*cols[1][2]-cols[1][1]*cols[0][2])
	if det < 0 {
		t.Scale[0] = -t.Scale[0]
		cols[0] = [3]float64{-cols[0][0], -cols[0][1], -cols[0][2]}
	}
	// Rotation matrix R[r][c] = cols[c][r] → quaternion (Shepperd's method).
	r00, r11, r22 := cols[0][0], cols[1][1], cols[2][2]
	var x, y, z, w float64
	switch tr := r00 + r11 + r22; {
	case tr > 0:
		s := math.Sqrt(tr+1) * 2
		w, x, y, z = s/4, (cols[1][2]-cols[2][1])/s, (cols[2][0]-cols[0][2])/s, (cols[0][1]-cols[1][0])/s
	case r00 > r11 && r00 > r22:
		s := math.Sqrt(1+r00-r11-r22) * 2
		w, x, y, z = (cols[1][2]-cols[2][1])/s, s/4, (cols[1][0]+cols[0][1])/s, (cols[2][0]+cols[0][2])/s
	case r11 > r22:
		s := math.Sqrt(1+r11-r00-r22) * 2
		w, x, y, z = (cols[2][0]-cols[0][2])/s, (cols[1][0]+cols[0][1])/s, s/4, (cols[2][1]+cols[1][2])/s
	default:
		s := math.Sqrt(1+r22-r00-r11) * 2
		w, x, y, z = (cols[0][1]-cols[1][0])/s, (cols[2][0]+cols[0][2])/s, (cols[2][1]+cols[1][2])/s, s/4
	}
	l := math.Sqrt(x*x + y*y + z*z + w*w)
	t.Rotation = [4]float32{float32(x / l), float32(y / l), float32(z / l), float32(w / l)}
	return t
}

// ZUpToYUpMatrix returns C·M·C⁻¹ with C the rotation of ZUpToYUp,
// (x, y, z) → (x, z, −y): a Z-up transform (column-major) in glTF's Y-up
// frame, so that it places a mesh converted by ZUpToYUp where the original
// placed the original. The last row is kept as (0, 0, 0, 1).
func ZUpToYUpMatrix(m Mat4) Mat4 {
	// C as rows: row0 = (1,0,0), row1 = (0,0,1), row2 = (0,−1,0).
	c := [3][3]float64{{1, 0, 0}, {0, 0, 1}, {0, -1, 0}}
	at := func(r, col int) float64 { return m[4*col+r] }
	var out Mat4
	for r := 0; r < 3; r++ {
		for col := 0; col < 3; col++ {
			// (C M C^T)[r][col] = Σ C[r][i] M[i][j] C[col][j]
			var s float64
			for i := 0; i < 3; i++ {
				for j := 0; j < 3; j++ {
					s += c[r][i] * at(i, j) * c[col][j]
				}
			}
			out[4*col+r] = s
		}
		var t float64
		for i := 0; i < 3; i++ {
			t += c[r][i] * at(i, 3)
		}
		out[12+r] = t
	}
	out[15] = 1
	return out
}
