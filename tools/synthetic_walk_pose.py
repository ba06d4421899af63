#!/usr/bin/env python3
"""A walking stick figure as a video run's STEM.pose.json (Goliath-308 names, each frame's time, track 0,
keypoints_3d in the pointmap's camera frame: x right, y down, z forward), for trying `sapiens-cli motion`
without a model: the README's angle plot comes from it.

Usage: synthetic_walk_pose.py OUT.pose.json [--seconds 3] [--fps 30] [--noise-mm 3] [--seed 1]
Hip flexion +-20 deg and knee flexion 5-60 deg at 1 stride/s, arms swinging opposite, walking along +x
at 1.2 m/s, 4 m from the camera. Only the body's keypoints are set; the others are null.
"""
import argparse
import json
import math
import os
import random

NAMES = json.load(open(os.path.join(os.path.dirname(__file__), "..", "resources", "data",
                                    "keypoints308.json")))["names"]


def add(a, b, s=1.0):
    return [a[i] + s * b[i] for i in range(3)]


def sagittal(degrees):
    """A unit vector in the walking plane: 0 points down, positive turns forward (+x)."""
    r = math.radians(degrees)
    return [math.sin(r), math.cos(r), 0.0]


def leg(hip, flexion, knee_flexion):
    knee = add(hip, sagittal(flexion), 0.45)
    ankle = add(knee, sagittal(flexion - knee_flexion), 0.42)
    return knee, ankle, add(ankle, [0.15, 0.07, 0]), add(ankle, [0.12, 0.07, 0.04]), add(ankle, [-0.05, 0.06, 0])


def figure(t):
    phase = 2 * math.pi * t
    pelvis = [-1.5 + 1.2 * t, 0.0, 4.0]
    points = {}
    for side, sign, shift in (("left", 1, 0.0), ("right", -1, math.pi)):
        hip = add(pelvis, [0, 0, 0.1 * sign])
        knee, ankle, big, small, heel = leg(hip, 20 * math.sin(phase + shift),
                                            32.5 + 27.5 * math.sin(phase + shift + 1.2))
        points.update({f"{side}_hip": hip, f"{side}_knee": knee, f"{side}_ankle": ankle,
                       f"{side}_big_toe": big, f"{side}_small_toe": small, f"{side}_heel": heel})
        shoulder = add(pelvis, [0.03, -0.48, 0.18 * sign])
        swing = -15 * math.sin(phase + shift)
        elbow = add(shoulder, sagittal(swing), 0.30)
        wrist = add(elbow, sagittal(swing + 25 + 10 * math.sin(phase + shift)), 0.27)
        points.update({f"{side}_shoulder": shoulder, f"{side}_elbow": elbow, f"{side}_wrist": wrist,
                       f"{side}_ear": add(pelvis, [0.04, -0.68, 0.08 * sign]),
                       f"{side}_eye": add(pelvis, [0.11, -0.71, 0.035 * sign])})
    points["neck"] = add(pelvis, [0.03, -0.52, 0])
    points["nose"] = add(pelvis, [0.14, -0.66, 0])
    return points


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--noise-mm", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    frames = []
    for i in range(int(args.seconds * args.fps)):
        t = i / args.fps
        points = figure(t)
        lifted, flat, scores = [], [], []
        for name in NAMES:
            p = points.get(name)
            if p is None:
                lifted.append(None)
                flat.append([0.0, 0.0])
                scores.append(0.0)
                continue
            p = [c + rng.gauss(0, args.noise_mm / 1000) for c in p]
            lifted.append([round(c, 6) for c in p])
            flat.append([round(640 + 800 * p[0] / p[2], 2), round(360 + 800 * p[1] / p[2], 2)])
            scores.append(0.9)
        frames.append({"image_name": f"{i:06d}", "time": round(t, 6), "instances": [
            {"bbox": [0, 0, 1280, 720], "track_id": 0, "keypoints": flat, "keypoint_scores": scores,
             "keypoints_3d": lifted}]})
    document = {"video": "synthetic_walk.mp4", "image_size": [720, 1280], "num_keypoints": len(NAMES),
                "kpt_thr_used": 0.3, "frames": frames,
                "note": "synthetic stick figure (tools/synthetic_walk_pose.py), not a model's output"}
    with open(args.output, "w") as out:
        json.dump(document, out)


if __name__ == "__main__":
    main()
