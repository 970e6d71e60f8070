'use strict';
// meshfs viewer: a small glTF 2.0 binary (GLB) loader and WebGL renderer.
//
// What it draws: the default scene's node hierarchy (matrix or TRS),
// every primitive's POSITION, NORMAL (flat normals made when absent),
// TEXCOORD_0 and COLOR_0, indexed (u8/u16/u32) or not, in its mode;
// materials' baseColorFactor and baseColorTexture (images embedded in a
// bufferView or named by URI, with their sampler), alphaMode MASK (with its
// cutoff) and BLEND (drawn after the rest), doubleSided. Skinned meshes are
// drawn in their bind pose (positions as stored), morph targets and
// animations are not applied. Light: ambient plus a key and a fill light
// fixed to the camera. The camera frames the scene's bounding box (of every
// vertex, node transforms applied) from the direction (+1, +1, +1), as the
// NAME.preview.png thumbnail does; it orbits with a mouse drag or the arrow
// keys, pans with a right or shift drag, zooms with the wheel or +/-, and R
// or Home resets it.
//
// The canvas's data-state is "loading", then "drawn" once the scene has
// been drawn, or "error" (the status line says why); its data-box is the
// scene's bounding box, [[min x, y, z], [max x, y, z]].
(function () {
  const GLB_MAGIC = 0x46546c67, CHUNK_JSON = 0x4e4f534a, CHUNK_BIN = 0x004e4942;
  const COMPONENT = {5120: Int8Array, 5121: Uint8Array, 5122: Int16Array, 5123: Uint16Array, 5125: Uint32Array, 5126: Float32Array};
  const NORMALIZE = {5120: 127, 5121: 255, 5122: 32767, 5123: 65535, 5125: 4294967295};
  const WIDTH = {SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16};
  const MAX_DEPTH = 256;

  // ---- matrices: column-major Float32Array(16), as glTF and WebGL ----
  function identity() { const m = new Float32Array(16); m[0] = m[5] = m[10] = m[15] = 1; return m; }
  function mul(a, b) {
    const o = new Float32Array(16);
    for (let c = 0; c < 4; c++) {
      for (let r = 0; r < 4; r++) {
        o[c * 4 + r] = a[r] * b[c * 4] + a[4 + r] * b[c * 4 + 1] + a[8 + r] * b[c * 4 + 2] + a[12 + r] * b[c * 4 + 3];
      }
    }
    return o;
  }
  function trs(t, q, s) {
    const [x, y, z, w] = q, [sx, sy, sz] = s;
    const m = new Float32Array(16);
    m[0] = (1 - 2 * (y * y + z * z)) * sx; m[1] = 2 * (x * y + z * w) * sx; m[2] = 2 * (x * z - y * w) * sx;
    m[4] = 2 * (x * y - z * w) * sy; m[5] = (1 - 2 * (x * x + z * z)) * sy; m[6] = 2 * (y * z + x * w) * sy;
    m[8] = 2 * (x * z + y * w) * sz; m[9] = 2 * (y * z - x * w) * sz; m[10] = (1 - 2 * (x * x + y * y)) * sz;
    m[12] = t[0]; m[13] = t[1]; m[14] = t[2]; m[15] = 1;
    return m;
  }
  // normalMatrix is the inverse transpose of m's upper 3×3 (column-major,
  // 9 values), with the sign of its determinant. Writing M's rows as
  // [a d g; b e h; c f i], the inverse transpose is the cofactor matrix
  // over the determinant.
  function normalMatrix(m) {
    const a = m[0], b = m[1], c = m[2], d = m[4], e = m[5], f = m[6], g = m[8], h = m[9], i = m[10];
    const c00 = e * i - h * f, c01 = -(b * i - h * c), c02 = b * f - e * c;
    const c10 = -(d * i - g * f), c11 = a * i - g * c, c12 = -(a * f - d * c);
    const c20 = d * h - g * e, c21 = -(a * h - g * b), c22 = a * e - d * b;
    const det = a * c00 + d * c01 + g * c02;
    const k = det !== 0 ? 1 / det : 0;
    return {m: new Float32Array([c00 * k, c10 * k, c20 * k, c01 * k, c11 * k, c21 * k, c02 * k, c12 * k, c22 * k]), det: det};
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), m = new Float32Array(16);
    m[0] = f / aspect; m[5] = f; m[10] = (far + near) / (near - far); m[11] = -1; m[14] = 2 * far * near / (near - far);
    return m;
  }
  function lookAt(eye, target, up) {
    const z = norm(sub(eye, target)), x = norm(cross(up, z)), y = cross(z, x);
    return new Float32Array([x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
      -dot(x, eye), -dot(y, eye), -dot(z, eye), 1]);
  }
  function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
  function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function norm(a) { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }

  // ---- GLB and accessors ----
  function parseGLB(buf) {
    const dv = new DataView(buf);
    if (buf.byteLength < 12 || dv.getUint32(0, true) !== GLB_MAGIC) throw new Error('not a GLB file: bad magic at byte 0');
    const version = dv.getUint32(4, true);
    if (version !== 2) throw new Error('GLB version ' + version + ' at byte 4, want 2');
    const length = dv.getUint32(8, true);
    if (length > buf.byteLength) throw new Error('GLB length ' + length + ' at byte 8 exceeds the file (' + buf.byteLength + ' bytes)');
    let off = 12, json = null, bin = null;
    while (off + 8 <= length) {
      const len = dv.getUint32(off, true), type = dv.getUint32(off + 4, true), start = off + 8;
      if (start + len > length) throw new Error('GLB chunk at byte ' + off + ' (length ' + len + ') runs past the end');
      if (type === CHUNK_JSON && json === null) json = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, start, len)));
      else if (type === CHUNK_BIN && bin === null) bin = new Uint8Array(buf, start, len);
      off = start + len + ((4 - len % 4) % 4);
    }
    if (json === null) throw new Error('GLB has no JSON chunk');
    return {json: json, bin: bin};
  }

  async function loadBuffers(g, bin, base) {
    return Promise.all((g.buffers || []).map(async function (b, i) {
      if (b.uri === undefined) {
        if (!bin) throw new Error('buffer ' + i + ' has no uri and the GLB no BIN chunk');
        return bin;
      }
      const res = await fetch(new URL(b.uri, base));
      if (!res.ok) throw new Error('buffer ' + i + ': ' + res.status + ' ' + res.statusText);
      return new Uint8Array(await res.arrayBuffer());
    }));
  }

  function viewBytes(g, bufs, i) {
    const v = g.bufferViews && g.bufferViews[i];
    if (!v) throw new Error('bufferView ' + i + ' does not exist');
    const b = bufs[v.buffer];
    const off = v.byteOffset || 0;
    if (!b || off + v.byteLength > b.byteLength) throw new Error('bufferView ' + i + ' runs past its buffer');
    return new Uint8Array(b.buffer, b.byteOffset + off, v.byteLength);
  }

  // accessor returns accessor i's elements tightly packed: {data, width,
  // count}; asFloat makes a Float32Array (normalized integers scaled). Its
  // count is checked against its bufferView before anything is allocated.
  function accessor(g, bufs, i, asFloat) {
    const a = g.accessors && g.accessors[i];
    if (!a) throw new Error('accessor ' + i + ' does not exist');
    const T = COMPONENT[a.componentType], width = WIDTH[a.type];
    if (!T || !width) throw new Error('accessor ' + i + ': componentType ' + a.componentType + ' type ' + a.type);
    if (!Number.isInteger(a.count) || a.count < 0) throw new Error('accessor ' + i + ': count ' + a.count);
    const n = a.count * width;
    let out;
    if (a.bufferView === undefined) {
      out = new T(n);
    } else {
      const v = g.bufferViews[a.bufferView], bytes = viewBytes(g, bufs, a.bufferView);
      const size = T.BYTES_PER_ELEMENT, elem = size * width, stride = v.byteStride || elem, off = a.byteOffset || 0;
      if (a.count > 0 && off + stride * (a.count - 1) + elem > bytes.byteLength) throw new Error('accessor ' + i + ' runs past bufferView ' + a.bufferView);
      if (stride === elem && (bytes.byteOffset + off) % size === 0) {
        out = new T(bytes.buffer, bytes.byteOffset + off, n);
      } else {
        out = new T(n);
        const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        const get = {5120: dv.getInt8, 5121: dv.getUint8, 5122: dv.getInt16, 5123: dv.getUint16, 5125: dv.getUint32, 5126: dv.getFloat32}[a.componentType];
        for (let e = 0; e < a.count; e++) {
          for (let c = 0; c < width; c++) out[e * width + c] = get.call(dv, off + e * stride + c * size, true);
        }
      }
    }
    if (a.sparse) {
      out = out.slice();
      const s = a.sparse;
      const idx = accessor({accessors: [{bufferView: s.indices.bufferView, byteOffset: s.indices.byteOffset, componentType: s.indices.componentType, count: s.count, type: 'SCALAR'}], bufferViews: g.bufferViews}, bufs, 0, false).data;
      const val = accessor({accessors: [{bufferView: s.values.bufferView, byteOffset: s.values.byteOffset, componentType: a.componentType, count: s.count, type: a.type}], bufferViews: g.bufferViews}, bufs, 0, false).data;
      for (let k = 0; k < s.count; k++) {
        if (idx[k] >= a.count) throw new Error('accessor ' + i + ': sparse index ' + idx[k] + ' past count ' + a.count);
        for (let c = 0; c < width; c++) out[idx[k] * width + c] = val[k * width + c];
      }
    }
    if (asFloat && !(out instanceof Float32Array)) {
      const f = new Float32Array(n), d = a.normalized ? NORMALIZE[a.componentType] : 1;
      for (let k = 0; k < n; k++) f[k] = a.normalized ? Math.max(out[k] / d, -1) : out[k];
      out = f;
    }
    return {data: out, width: width, count: a.count};
  }

  // ---- geometry helpers ----
  // unindex expands each attribute by the index list.
  function unindex(attrs, idx) {
    const out = {};
    for (const k in attrs) {
      const a = attrs[k], w = a.width, d = new Float32Array(idx.length * w);
      for (let i = 0; i < idx.length; i++) {
        const s = idx[i];
        if (s >= a.count) throw new Error('index ' + idx[i] + ' past ' + k + ' count ' + a.count);
        for (let c = 0; c < w; c++) d[i * w + c] = a.data[s * w + c];
      }
      out[k] = {data: d, width: w, count: idx.length};
    }
    return out;
  }
  // flatNormals gives each triangle of a non-indexed list its face normal.
  function flatNormals(pos) {
    const p = pos.data, n = new Float32Array(p.length);
    for (let t = 0; t + 8 < p.length; t += 9) {
      const u = [p[t + 3] - p[t], p[t + 4] - p[t + 1], p[t + 5] - p[t + 2]];
      const v = [p[t + 6] - p[t], p[t + 7] - p[t + 1], p[t + 8] - p[t + 2]];
      const f = norm(cross(u, v));
      for (let k = 0; k < 9; k += 3) { n[t + k] = f[0]; n[t + k + 1] = f[1]; n[t + k + 2] = f[2]; }
    }
    return {data: n, width: 3, count: pos.count};
  }

  // ---- images ----
  async function decodeImage(blob) {
    if (self.createImageBitmap) {
      return createImageBitmap(blob, {premultiplyAlpha: 'none', colorSpaceConversion: 'none'});
    }
    const url = URL.createObjectURL(blob);
    try {
      const img = new Image();
      img.src = url;
      await img.decode();
      return img;
    } finally {
      URL.revokeObjectURL(url);
    }
  }
  async function loadImage(g, bufs, i, base) {
    const im = g.images[i];
    if (im.bufferView !== undefined) return decodeImage(new Blob([viewBytes(g, bufs, im.bufferView)], {type: im.mimeType || 'image/png'}));
    if (im.uri === undefined) throw new Error('image ' + i + ' has neither bufferView nor uri');
    const res = await fetch(new URL(im.uri, base));
    if (!res.ok) throw new Error('image ' + i + ': ' + res.status + ' ' + res.statusText);
    return decodeImage(await res.blob());
  }

  // ---- WebGL ----
  const VS = [
    'attribute vec3 aPos; attribute vec3 aNrm; attribute vec2 aUV; attribute vec4 aCol;',
    'uniform mat4 uModel, uViewProj; uniform mat3 uNrm;',
    'varying vec3 vNrm; varying vec2 vUV; varying vec4 vCol;',
    'void main() { vNrm = uNrm * aNrm; vUV = aUV; vCol = aCol; gl_Position = uViewProj * (uModel * vec4(aPos, 1.0)); }',
  ].join('\n');
  const FS = [
    '#ifdef GL_FRAGMENT_PRECISION_HIGH', 'precision highp float;', '#else', 'precision mediump float;', '#endif',
    'uniform vec4 uBase; uniform sampler2D uTex; uniform float uCutoff; uniform float uBlend;',
    'uniform vec3 uKey, uFill;',
    'varying vec3 vNrm; varying vec2 vUV; varying vec4 vCol;',
    'void main() {',
    '  vec4 c = uBase * vCol * texture2D(uTex, vUV);',
    '  if (c.a < uCutoff) discard;',
    '  vec3 n = normalize(vNrm); if (!gl_FrontFacing) n = -n;',
    '  float l = 0.3 + 0.6 * max(dot(n, uKey), 0.0) + 0.25 * max(dot(n, uFill), 0.0);',
    '  gl_FragColor = vec4(min(c.rgb * l, 1.0), uBlend > 0.5 ? c.a : 1.0);',
    '}',
  ].join('\n');

  function program(gl) {
    function shader(type, src) {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('shader: ' + gl.getShaderInfoLog(s));
      return s;
    }
    const p = gl.createProgram();
    gl.attachShader(p, shader(gl.VERTEX_SHADER, VS));
    gl.attachShader(p, shader(gl.FRAGMENT_SHADER, FS));
    ['aPos', 'aNrm', 'aUV', 'aCol'].forEach(function (n, i) { gl.bindAttribLocation(p, i, n); });
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error('program: ' + gl.getProgramInfoLog(p));
    const u = {};
    ['uModel', 'uViewProj', 'uNrm', 'uBase', 'uTex', 'uCutoff', 'uBlend', 'uKey', 'uFill'].forEach(function (n) { u[n] = gl.getUniformLocation(p, n); });
    return {p: p, u: u};
  }

  function isPow2(n) { return (n & (n - 1)) === 0; }

  function texture(gl, webgl2, img, sampler) {
    const t = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, t);
    gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, false);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
    gl.pixelStorei(gl.UNPACK_COLORSPACE_CONVERSION_WEBGL, gl.NONE);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, img);
    const s = sampler || {};
    const pot = webgl2 || (isPow2(img.width) && isPow2(img.height));
    const mipmapped = [gl.NEAREST_MIPMAP_NEAREST, gl.LINEAR_MIPMAP_NEAREST, gl.NEAREST_MIPMAP_LINEAR, gl.LINEAR_MIPMAP_LINEAR];
    let min = s.minFilter || gl.LINEAR_MIPMAP_LINEAR;
    if (!pot) min = (min === gl.NEAREST || min === gl.NEAREST_MIPMAP_NEAREST || min === gl.NEAREST_MIPMAP_LINEAR) ? gl.NEAREST : gl.LINEAR;
    if (mipmapped.indexOf(min) >= 0) gl.generateMipmap(gl.TEXTURE_2D);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, min);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, s.magFilter || gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, pot ? (s.wrapS || gl.REPEAT) : gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, pot ? (s.wrapT || gl.REPEAT) : gl.CLAMP_TO_EDGE);
    return t;
  }

  function arrayBuffer(gl, target, data) {
    const b = gl.createBuffer();
    gl.bindBuffer(target, b);
    gl.bufferData(target, data, gl.STATIC_DRAW);
    return b;
  }

  // ---- the scene ----
  // drawList walks the default scene and returns {mesh, world} for every
  // node with a mesh.
  function drawList(g) {
    const nodes = g.nodes || [];
    let roots;
    const sc = g.scenes && g.scenes[g.scene !== undefined ? g.scene : 0];
    if (sc) {
      roots = sc.nodes || [];
    } else {
      const child = new Set();
      nodes.forEach(function (n) { (n.children || []).forEach(function (c) { child.add(c); }); });
      roots = nodes.map(function (_, i) { return i; }).filter(function (i) { return !child.has(i); });
    }
    const out = [];
    function visit(i, parent, depth) {
      const n = nodes[i];
      if (!n || depth > MAX_DEPTH) return;
      const local = n.matrix ? new Float32Array(n.matrix) : trs(n.translation || [0, 0, 0], n.rotation || [0, 0, 0, 1], n.scale || [1, 1, 1]);
      const world = mul(parent, local);
      // A skinned mesh at its bind pose sits where its positions say,
      // whatever its node's transform (glTF ignores it for skinned meshes).
      if (n.mesh !== undefined) out.push({mesh: n.mesh, world: n.skin !== undefined ? identity() : world});
      (n.children || []).forEach(function (c) { visit(c, world, depth + 1); });
    }
    roots.forEach(function (r) { visit(r, identity(), 0); });
    return out;
  }

  // Viewer owns one canvas's context and draws one GLB at a time.
  function Viewer(canvas, status) {
    this.canvas = canvas;
    this.status = status;
    const opts = {antialias: true, alpha: false, premultipliedAlpha: false};
    let gl = canvas.getContext('webgl2', opts);
    this.webgl2 = !!gl;
    if (!gl) gl = canvas.getContext('webgl', opts) || canvas.getContext('experimental-webgl', opts);
    if (!gl) throw new Error('this browser gives no WebGL context');
    this.gl = gl;
    this.uint32 = this.webgl2 || !!gl.getExtension('OES_element_index_uint');
    this.prog = program(gl);
    // A 1×1 white texture, complete as it is (its mip chain is level 0),
    // stands for a missing base-colour texture.
    this.white = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, this.white);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, 1, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array([255, 255, 255, 255]));
    this.items = [];
    this.gpu = [];
    this.center = [0, 0, 0];
    this.radius = 1;
    this.reset();
    this.pending = false;
    this.token = 0;
  }

  Viewer.prototype.say = function (text, state) {
    this.status.textContent = text;
    if (state) this.canvas.dataset.state = state;
  };

  Viewer.prototype.reset = function () {
    this.yaw = Math.PI / 4;
    this.pitch = Math.asin(1 / Math.sqrt(3));
    this.dist = 0;
    this.target = this.center.slice();
    this.redraw();
  };

  Viewer.prototype.clear = function () {
    const gl = this.gl;
    this.gpu.forEach(function (o) { if (o instanceof WebGLTexture) gl.deleteTexture(o); else gl.deleteBuffer(o); });
    this.gpu = [];
    this.items = [];
  };

  // fetchBytes reads the response's body, saying on the status line how
  // much has come.
  Viewer.prototype.fetchBytes = async function (res, name, token) {
    if (!res.body || !res.body.getReader) return res.arrayBuffer();
    const total = Number(res.headers.get('Content-Length')) || 0;
    const reader = res.body.getReader(), parts = [];
    let got = 0, said = 0;
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      parts.push(r.value);
      got += r.value.length;
      if (token === this.token && performance.now() - said > 200) {
        said = performance.now();
        this.say('loading ' + name + '… ' + mib(got) + (total ? ' of ' + mib(total) : ''));
      }
    }
    const all = new Uint8Array(got);
    let off = 0;
    for (const p of parts) { all.set(p, off); off += p.length; }
    return all.buffer;
  };
  function plural(n, what) { return n + ' ' + what + (n === 1 ? '' : 's'); }
  function mib(n) { return (n / 1048576).toFixed(1) + ' MiB'; }

  // load shows the GLB at url in place of what is shown, unless another
  // load starts before it ends.
  Viewer.prototype.load = async function (url) {
    const token = ++this.token, name = decodeURIComponent(url.split('/').pop());
    this.say('loading ' + name + '…', 'loading');
    const res = await fetch(url);
    if (!res.ok) throw new Error(res.status + ' ' + res.statusText + (res.status >= 500 ? ': ' + (await res.text()).trim() : ''));
    const glb = parseGLB(await this.fetchBytes(res, name, token));
    const g = glb.json, base = new URL(url, location.href);
    const bufs = await loadBuffers(g, glb.bin, base);
    const notes = [];
    // Textures: each image decoded once; a failure is noted, never fatal.
    const images = await Promise.all((g.images || []).map(function (_, i) {
      return loadImage(g, bufs, i, base).catch(function (e) { notes.push('image ' + i + ': ' + e.message); return null; });
    }));
    if (token !== this.token) return;
    this.clear();
    this.loaded = false;
    try {
      this.build(g, bufs, images, notes);
    } catch (e) {
      this.clear();
      this.redraw();
      throw e;
    }
  };

  // build uploads the scene of the glTF g, whose buffers and decoded images
  // (null where one failed) are given, and frames it.
  Viewer.prototype.build = function (g, bufs, images, notes) {
    const gl = this.gl, me = this;
    const texCache = new Map();
    function textureOf(info) {
      if (!info) return me.white;
      const t = g.textures && g.textures[info.index];
      if (!t || t.source === undefined || !images[t.source]) return me.white;
      if ((info.texCoord || 0) !== 0) notes.push('texture ' + info.index + ' uses TEXCOORD_' + info.texCoord + ': drawn with TEXCOORD_0');
      if (!texCache.has(info.index)) {
        const tex = texture(gl, me.webgl2, images[t.source], t.sampler !== undefined ? g.samplers[t.sampler] : null);
        me.gpu.push(tex);
        texCache.set(info.index, tex);
      }
      return texCache.get(info.index);
    }
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    let triangles = 0;
    for (const d of drawList(g)) {
      const mesh = g.meshes && g.meshes[d.mesh];
      if (!mesh) continue;
      const nm = normalMatrix(d.world);
      for (const p of mesh.primitives || []) {
        const at = p.attributes || {};
        if (at.POSITION === undefined) continue;
        const mode = p.mode !== undefined ? p.mode : 4;
        let attrs = {POSITION: accessor(g, bufs, at.POSITION, true)};
        if (at.NORMAL !== undefined) attrs.NORMAL = accessor(g, bufs, at.NORMAL, true);
        if (at.TEXCOORD_0 !== undefined) attrs.TEXCOORD_0 = accessor(g, bufs, at.TEXCOORD_0, true);
        if (at.COLOR_0 !== undefined) attrs.COLOR_0 = accessor(g, bufs, at.COLOR_0, true);
        let idx = p.indices !== undefined ? accessor(g, bufs, p.indices, false).data : null;
        if (idx) {
          const n = attrs.POSITION.count;
          for (let k = 0; k < idx.length; k++) if (idx[k] >= n) throw new Error('mesh ' + d.mesh + ': index ' + idx[k] + ' at ' + k + ' past the ' + n + ' vertices');
        }
        if ((!attrs.NORMAL && mode === 4) || (idx instanceof Uint32Array && !this.uint32)) {
          if (idx) attrs = unindex(attrs, idx);
          idx = null;
        }
        if (!attrs.NORMAL) attrs.NORMAL = mode === 4 ? flatNormals(attrs.POSITION) : {data: new Float32Array(attrs.POSITION.data.length), width: 3};
        const pos = attrs.POSITION.data, w = d.world;
        for (let k = 0; k + 2 < pos.length; k += 3) {
          const x = pos[k], y = pos[k + 1], z = pos[k + 2];
          if (!isFinite(x) || !isFinite(y) || !isFinite(z)) continue;
          const v = [w[0] * x + w[4] * y + w[8] * z + w[12], w[1] * x + w[5] * y + w[9] * z + w[13], w[2] * x + w[6] * y + w[10] * z + w[14]];
          for (let c = 0; c < 3; c++) { if (v[c] < lo[c]) lo[c] = v[c]; if (v[c] > hi[c]) hi[c] = v[c]; }
        }
        const item = {world: d.world, nrm: nm.m, mirrored: nm.det < 0, mode: mode, buffers: [], count: 0};
        for (const [name, loc] of [['POSITION', 0], ['NORMAL', 1], ['TEXCOORD_0', 2], ['COLOR_0', 3]]) {
          if (!attrs[name]) continue;
          const b = arrayBuffer(gl, gl.ARRAY_BUFFER, attrs[name].data);
          this.gpu.push(b);
          item.buffers.push({loc: loc, buf: b, width: attrs[name].width});
        }
        if (idx) {
          item.index = arrayBuffer(gl, gl.ELEMENT_ARRAY_BUFFER, idx);
          this.gpu.push(item.index);
          item.indexType = idx instanceof Uint8Array ? gl.UNSIGNED_BYTE : idx instanceof Uint16Array ? gl.UNSIGNED_SHORT : gl.UNSIGNED_INT;
          item.count = idx.length;
        } else {
          item.count = attrs.POSITION.data.length / 3;
        }
        if (mode === 4) triangles += Math.floor(item.count / 3);
        const mat = (p.material !== undefined && g.materials && g.materials[p.material]) || {};
        const pbr = mat.pbrMetallicRoughness || {};
        item.base = pbr.baseColorFactor || [1, 1, 1, 1];
        item.tex = textureOf(pbr.baseColorTexture);
        item.cutoff = mat.alphaMode === 'MASK' ? (mat.alphaCutoff !== undefined ? mat.alphaCutoff : 0.5) : -1;
        item.blend = mat.alphaMode === 'BLEND';
        item.doubleSided = !!mat.doubleSided;
        this.items.push(item);
      }
    }
    this.lo = lo;
    this.hi = hi;
    this.canvas.dataset.box = JSON.stringify([lo, hi]);
    if (lo[0] <= hi[0]) {
      this.center = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
      this.radius = Math.max(Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 2, 1e-6);
    } else {
      this.center = [0, 0, 0];
      this.radius = 1;
    }
    this.items.sort(function (a, b) { return a.blend - b.blend; });
    const anims = (g.animations || []).length;
    this.summary = (this.items.length ? plural(this.items.length, 'primitive') + ', ' + plural(triangles, 'triangle') + ', ' +
      plural(texCache.size, 'texture') : 'no mesh to draw') + (anims ? ', ' + plural(anims, 'animation') + ' (not played)' : '') +
      (notes.length ? ' · ' + notes.join('; ') : '');
    this.loaded = true;
    this.fresh = true;
    this.reset();
  };

  Viewer.prototype.redraw = function () {
    if (this.pending) return;
    this.pending = true;
    const me = this;
    requestAnimationFrame(function () { me.pending = false; me.draw(); });
  };

  Viewer.prototype.draw = function () {
    const gl = this.gl, c = this.canvas, u = this.prog.u;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(c.clientWidth * dpr)), h = Math.max(1, Math.round(c.clientHeight * dpr));
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.16, 0.17, 0.2, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    if (!this.loaded) return;
    const aspect = w / h, fovy = 40 * Math.PI / 180;
    if (!this.dist) this.dist = this.fit(aspect, fovy);
    const cp = Math.cos(this.pitch), dir = [cp * Math.sin(this.yaw), Math.sin(this.pitch), cp * Math.cos(this.yaw)];
    const eye = [this.target[0] + dir[0] * this.dist, this.target[1] + dir[1] * this.dist, this.target[2] + dir[2] * this.dist];
    const view = lookAt(eye, this.target, [0, 1, 0]);
    const near = Math.max(this.dist - this.radius * 2, this.radius * 1e-3), far = this.dist + this.radius * 2 + Math.hypot(...sub(this.target, this.center));
    const vp = mul(perspective(fovy, aspect, near, far), view);
    // Lights fixed to the camera: the key from upper left, the fill from
    // lower right, in world space.
    const right = [view[0], view[4], view[8]], up = [view[1], view[5], view[9]], back = [view[2], view[6], view[10]];
    function cam(x, y, z) { return new Float32Array(norm([right[0] * x + up[0] * y + back[0] * z, right[1] * x + up[1] * y + back[1] * z, right[2] * x + up[2] * y + back[2] * z])); }
    gl.useProgram(this.prog.p);
    gl.uniformMatrix4fv(u.uViewProj, false, vp);
    gl.uniform3fv(u.uKey, cam(-0.45, 0.6, 0.66));
    gl.uniform3fv(u.uFill, cam(0.6, -0.25, 0.5));
    gl.uniform1i(u.uTex, 0);
    gl.activeTexture(gl.TEXTURE0);
    gl.enable(gl.DEPTH_TEST);
    for (const it of this.items) {
      gl.uniformMatrix4fv(u.uModel, false, it.world);
      gl.uniformMatrix3fv(u.uNrm, false, it.nrm);
      gl.uniform4fv(u.uBase, it.base);
      gl.uniform1f(u.uCutoff, it.cutoff);
      gl.uniform1f(u.uBlend, it.blend ? 1 : 0);
      gl.bindTexture(gl.TEXTURE_2D, it.tex);
      if (it.doubleSided) gl.disable(gl.CULL_FACE); else gl.enable(gl.CULL_FACE);
      gl.frontFace(it.mirrored ? gl.CW : gl.CCW);
      if (it.blend) { gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false); } else { gl.disable(gl.BLEND); gl.depthMask(true); }
      for (let loc = 0; loc < 4; loc++) gl.disableVertexAttribArray(loc);
      gl.vertexAttrib3f(1, 0, 0, 1);
      gl.vertexAttrib2f(2, 0, 0);
      gl.vertexAttrib4f(3, 1, 1, 1, 1);
      for (const b of it.buffers) {
        gl.bindBuffer(gl.ARRAY_BUFFER, b.buf);
        gl.enableVertexAttribArray(b.loc);
        gl.vertexAttribPointer(b.loc, b.width, gl.FLOAT, false, 0, 0);
      }
      if (it.index) {
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, it.index);
        gl.drawElements(it.mode, it.count, it.indexType, 0);
      } else {
        gl.drawArrays(it.mode, 0, it.count);
      }
    }
    gl.depthMask(true);
    if (this.fresh) {
      this.fresh = false;
      this.say(this.summary, 'drawn');
    }
  };

  // fit is the distance from the box's centre at which the camera, looking
  // along its current direction, sees the whole bounding box: every corner
  // inside the frustum, with a small margin.
  Viewer.prototype.fit = function (aspect, fovy) {
    const tanY = Math.tan(fovy / 2), tanX = tanY * aspect;
    const cp = Math.cos(this.pitch), back = [cp * Math.sin(this.yaw), Math.sin(this.pitch), cp * Math.cos(this.yaw)];
    const right = norm(cross([0, 1, 0], back)), up = cross(back, right);
    let d = 0;
    if (!(this.lo && this.lo[0] <= this.hi[0])) return this.radius / Math.sin(Math.min(fovy, 2 * Math.atan(tanX)) / 2);
    for (let k = 0; k < 8; k++) {
      const p = sub([k & 1 ? this.hi[0] : this.lo[0], k & 2 ? this.hi[1] : this.lo[1], k & 4 ? this.hi[2] : this.lo[2]], this.center);
      const z = dot(p, back);
      d = Math.max(d, z + Math.abs(dot(p, right)) / tanX, z + Math.abs(dot(p, up)) / tanY);
    }
    return Math.max(d * 1.08, this.radius * 0.05);
  };

  // ---- controls ----
  Viewer.prototype.orbit = function (dyaw, dpitch) {
    this.yaw += dyaw;
    this.pitch = Math.max(-1.55, Math.min(1.55, this.pitch + dpitch));
    this.redraw();
  };
  Viewer.prototype.zoom = function (f) {
    if (!this.dist) return;
    this.dist = Math.max(this.radius * 0.02, Math.min(this.radius * 200, this.dist * f));
    this.redraw();
  };
  Viewer.prototype.pan = function (dx, dy) {
    // dx, dy in canvas pixels: the target moves with the pointer.
    const s = this.dist * 0.8 / Math.max(1, this.canvas.clientHeight);
    const cy = Math.cos(this.yaw), sy = Math.sin(this.yaw), sp = Math.sin(this.pitch), cp = Math.cos(this.pitch);
    const right = [cy, 0, -sy], up = [-sy * sp, cp, -cy * sp];
    for (let c = 0; c < 3; c++) this.target[c] += (-dx * right[c] + dy * up[c]) * s;
    this.redraw();
  };

  function controls(v) {
    const c = v.canvas;
    let drag = null;
    c.addEventListener('contextmenu', function (e) { e.preventDefault(); });
    c.addEventListener('pointerdown', function (e) {
      c.focus();
      c.setPointerCapture(e.pointerId);
      drag = {x: e.clientX, y: e.clientY, pan: e.button === 2 || e.button === 1 || e.shiftKey};
      e.preventDefault();
    });
    c.addEventListener('pointermove', function (e) {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX;
      drag.y = e.clientY;
      if (drag.pan) v.pan(dx, dy); else v.orbit(-dx * 0.01, dy * 0.01);
    });
    function end() { drag = null; }
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('wheel', function (e) {
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
      v.zoom(Math.exp(e.deltaY * unit * 0.0015));
    }, {passive: false});
    c.addEventListener('keydown', function (e) {
      const step = Math.PI / 18;
      let done = true;
      switch (e.key) {
        case 'ArrowLeft': if (e.shiftKey) v.pan(-20, 0); else v.orbit(step, 0); break;
        case 'ArrowRight': if (e.shiftKey) v.pan(20, 0); else v.orbit(-step, 0); break;
        case 'ArrowUp': if (e.shiftKey) v.pan(0, -20); else v.orbit(0, step); break;
        case 'ArrowDown': if (e.shiftKey) v.pan(0, 20); else v.orbit(0, -step); break;
        case '+': case '=': v.zoom(1 / 1.15); break;
        case '-': case '_': v.zoom(1.15); break;
        case 'r': case 'R': case 'Home': v.reset(); break;
        default: done = false;
      }
      if (done) e.preventDefault();
    });
    if (self.ResizeObserver) new ResizeObserver(function () { v.redraw(); }).observe(c);
    else window.addEventListener('resize', function () { v.redraw(); });
  }

  document.addEventListener('DOMContentLoaded', function () {
    const canvas = document.getElementById('view'), status = document.getElementById('status');
    if (!canvas || !status) return;
    let v;
    try {
      v = new Viewer(canvas, status);
    } catch (e) {
      status.textContent = 'no 3D view: ' + e.message;
      canvas.dataset.state = 'error';
      return;
    }
    controls(v);
    function show(url) {
      const token = v.token + 1;
      v.load(url).catch(function (e) {
        if (token === v.token) v.say('could not show ' + decodeURIComponent(url.split('/').pop()) + ': ' + e.message, 'error');
      });
    }
    const buttons = document.querySelectorAll('button.glb');
    for (const b of buttons) {
      b.addEventListener('click', function () {
        for (const o of buttons) o.setAttribute('aria-pressed', o === b ? 'true' : 'false');
        show(b.dataset.glb);
      });
    }
    // The view is the page's point: it takes the keys from the start.
    canvas.focus({preventScroll: true});
    const reset = document.getElementById('reset');
    if (reset) reset.addEventListener('click', function () { v.reset(); });
    show(canvas.dataset.glb);
  });
})();
