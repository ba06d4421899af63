// Opens a BVH file with three.js's BVHLoader and prints what it read as JSON: the bones (end sites left
// out, counted apart), each bone's offset, the frame count and frame time, and each bone's rotation per
// frame as a quaternion [x, y, z, w]. Usage: node bvh_summary.mjs FILE.bvh
import { readFileSync } from 'node:fs';
import { BVHLoader } from 'three/examples/jsm/loaders/BVHLoader.js';

const text = readFileSync(process.argv[2], 'utf8');
const { skeleton, clip } = new BVHLoader().parse(text);
const bones = skeleton.bones.filter((bone) => bone.name !== 'ENDSITE');
const rotations = {};
let times = [];
for (const track of clip.tracks) {
  if (!track.name.endsWith('.quaternion')) continue;
  const name = track.name.slice(0, -'.quaternion'.length);
  times = Array.from(track.times);
  const values = Array.from(track.values);
  rotations[name] = [];
  for (let i = 0; i < values.length; i += 4) rotations[name].push(values.slice(i, i + 4));
}
const summary = {
  bones: bones.map((bone) => bone.name),
  endSites: skeleton.bones.length - bones.length,
  offsets: Object.fromEntries(bones.map((bone) => [bone.name, bone.position.toArray()])),
  frames: times.length,
  frameTime: times.length > 1 ? times[1] - times[0] : null,
  duration: clip.duration,
  rotations,
};
process.stdout.write(JSON.stringify(summary));
