#!/usr/bin/python3
"""Checks BVH Euler angles against SciPy's reading of the convention: Rotation.from_euler('ZXY', [z, x, y],
degrees=True) (upper case = intrinsic, the channel order Zrotation Xrotation Yrotation).

Reads JSON from stdin: a list of cases {"chain": [[z, x, y], ...] from the root down to a joint, "rest":
[x, y, z] a rest bone direction of that joint, "expected": [x, y, z] that bone's direction in the world}.
Prints the largest angle in degrees between a composed, rotated rest bone and its expected direction.
"""
import json
import sys

import numpy as np
from scipy.spatial.transform import Rotation

cases = json.load(sys.stdin)
largest = 0.0
for case in cases:
    world = Rotation.identity()
    for angles in case["chain"]:
        world = world * Rotation.from_euler("ZXY", angles, degrees=True)
    bone = world.apply(np.array(case["rest"], dtype=float))
    expected = np.array(case["expected"], dtype=float)
    cosine = np.dot(bone, expected) / (np.linalg.norm(bone) * np.linalg.norm(expected))
    largest = max(largest, float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0)))))
print(json.dumps({"cases": len(cases), "max_degrees": largest}))
