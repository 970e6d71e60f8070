// validate.mjs runs the pinned Khronos glTF validator (npm gltf-validator,
// see package.json) over each file named on the command line and prints one
// JSON report per line (NDJSON), in argument order, so a caller can batch
// many files into one node process. A file that cannot be read or parsed at
// all still yields a line: {"uri": ..., "fatal": "reason"}.
//
//   node validate.mjs a.glb b.glb      # reports for a.glb and b.glb
//   node validate.mjs -                # validate the bytes on stdin
//
// MESHFS_VALIDATOR_MAX_ISSUES caps the messages per report (default 1000;
// the counts numErrors/numWarnings stay exact only below that cap).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const validator = require('gltf-validator');

const maxIssues = Number(process.env.MESHFS_VALIDATOR_MAX_ISSUES || 1000);

async function validateOne(name) {
  let bytes;
  try {
    bytes = name === '-' ? readFileSync(0) : readFileSync(name);
  } catch (e) {
    return { uri: name, fatal: String(e && e.message ? e.message : e) };
  }
  try {
    return await validator.validateBytes(new Uint8Array(bytes), {
      uri: name,
      maxIssues,
      // External resources (textures) are never embedded by meshfs and need
      // not exist beside the .glb, so they are not loaded.
    });
  } catch (e) {
    return { uri: name, fatal: String(e && e.message ? e.message : e) };
  }
}

const args = process.argv.slice(2);
if (args.length === 0) {
  process.stderr.write('usage: node validate.mjs FILE.glb... (- for stdin)\n');
  process.exit(2);
}
for (const name of args) {
  const report = await validateOne(name);
  process.stdout.write(JSON.stringify(report) + '\n');
}
