#!/usr/bin/env python3
"""A strict reader of TRC and MOT files, written from OpenSim's TRCFileAdapter and DelimFileAdapter rules
(plus what makes the data usable: no NaN or empty field, increasing time, counts that match the header).

Usage: opensim_file_check.py trc|mot FILE
Exits 0 printing "ok" when the file passes, 1 printing "FILE: line N: reason" at the first broken rule.
"""
import math
import sys

TRC_KEYS = ["DataRate", "CameraRate", "NumFrames", "NumMarkers", "Units", "OrigDataRate",
            "OrigDataStartFrame", "OrigNumFrames"]


class Broken(Exception):
    def __init__(self, line, reason):
        super().__init__(f"line {line}: {reason}")


def number(text, line, what):
    if text == "":
        raise Broken(line, f"{what} is empty (OpenSim reads it as NaN)")
    try:
        value = float(text)
    except ValueError:
        raise Broken(line, f"{what} '{text}' is not a number")
    if not math.isfinite(value):
        raise Broken(line, f"{what} is {text} (not finite)")
    return value


def read_lines(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Broken(0, "not UTF-8 text")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def data_rows(lines, start, width, what):
    """Rows from `start` to the first blank line (where OpenSim stops); nothing may follow a blank line."""
    rows, times = [], []
    index = start
    while index < len(lines) and lines[index].strip() != "":
        fields = lines[index].split("\t")
        if len(fields) != width:
            raise Broken(index + 1, f"{len(fields)} fields where the {what} give {width}")
        times_column = 1 if what == "marker labels" else 0
        values = [number(f, index + 1, f"field {i + 1}") for i, f in enumerate(fields)]
        if times and values[times_column] <= times[-1]:
            raise Broken(index + 1, f"time {values[times_column]} does not increase")
        times.append(values[times_column])
        rows.append(values)
        index += 1
    for rest in range(index, len(lines)):
        if lines[rest].strip() != "":
            raise Broken(rest + 1, "data after a blank line (OpenSim stops reading at a blank line)")
    return rows


def check_trc(lines):
    if len(lines) < 5:
        raise Broken(len(lines), "a TRC file has 5 header lines")
    if lines[0].replace("\t", " ").split(" ")[0] != "PathFileType":
        raise Broken(1, "the first line does not start with PathFileType")
    keys = [k for k in lines[1].split("\t") if k != ""]
    if keys != TRC_KEYS:
        raise Broken(2, f"the header keys are {keys}, not {TRC_KEYS}")
    values = [v for v in lines[2].split("\t") if v != ""]
    if len(values) != len(TRC_KEYS):
        raise Broken(3, f"{len(values)} header values for {len(TRC_KEYS)} keys")
    header = dict(zip(TRC_KEYS, values))
    for key in ("NumFrames", "NumMarkers", "OrigDataStartFrame", "OrigNumFrames"):
        if not header[key].isdigit():
            raise Broken(3, f"{key} '{header[key]}' is not a whole number")
    for key in ("DataRate", "CameraRate", "OrigDataRate"):
        if number(header[key], 3, key) <= 0:
            raise Broken(3, f"{key} is not positive")
    if header["Units"] not in ("m", "mm"):
        raise Broken(3, f"Units '{header['Units']}' is neither m nor mm")
    markers = int(header["NumMarkers"])
    labels_raw = lines[3].split("\t")
    labels = [label for label in labels_raw if label != ""]
    if len(labels) != markers + 2:
        raise Broken(4, f"{len(labels)} labels where NumMarkers + 2 = {markers + 2}")
    if labels[0] != "Frame#" or labels[1] != "Time":
        raise Broken(4, "the labels do not start with Frame# and Time")
    expected_raw = ["Frame#", "Time"] + [f for name in labels[2:] for f in (name, "", "")]
    if labels_raw != expected_raw:
        raise Broken(4, "each marker name is not followed by exactly two empty fields")
    if len(set(labels[2:])) != markers:
        raise Broken(4, "a marker name appears twice")
    xyz = lines[4].split("\t")
    expected_xyz = ["", ""] + [f"{axis}{i}" for i in range(1, markers + 1) for axis in "XYZ"]
    if xyz != expected_xyz:
        raise Broken(5, "the coordinate labels are not X1 Y1 Z1 ... after two empty fields")
    start = 5
    while start < len(lines) and lines[start].strip() == "":
        start += 1
    rows = data_rows(lines, start, 3 * markers + 2, "marker labels")
    if len(rows) != int(header["NumFrames"]):
        raise Broken(3, f"NumFrames {header['NumFrames']} but {len(rows)} rows")
    if not rows:
        raise Broken(start + 1, "no data rows")


def check_mot(lines):
    try:
        end = next(i for i, line in enumerate(lines) if line == "endheader")
    except StopIteration:
        raise Broken(len(lines), "no line is exactly 'endheader'")
    header = {}
    for line in lines[:end]:
        if "=" in line:
            key, value = line.split("=", 1)
            header[key.strip()] = value.strip()
    for key in ("version", "nRows", "nColumns", "inDegrees"):
        if key not in header:
            raise Broken(end + 1, f"the header has no {key}=")
    if header["inDegrees"] not in ("yes", "no"):
        raise Broken(end + 1, f"inDegrees={header['inDegrees']} is neither yes nor no")
    if end + 1 >= len(lines):
        raise Broken(end + 2, "no column labels after endheader")
    labels = lines[end + 1].split("\t")
    if labels[0] != "time":
        raise Broken(end + 2, f"the first label is '{labels[0]}', not 'time'")
    if "" in labels or len(set(labels)) != len(labels):
        raise Broken(end + 2, "a label is empty or appears twice")
    if header["nColumns"] != str(len(labels)):
        raise Broken(end + 1, f"nColumns={header['nColumns']} but {len(labels)} labels")
    rows = data_rows(lines, end + 2, len(labels), "labels")
    if header["nRows"] != str(len(rows)):
        raise Broken(end + 1, f"nRows={header['nRows']} but {len(rows)} rows")
    if not rows:
        raise Broken(end + 3, "no data rows")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("trc", "mot"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    path = sys.argv[2]
    try:
        lines = read_lines(path)
        (check_trc if sys.argv[1] == "trc" else check_mot)(lines)
    except Broken as broken:
        print(f"{path}: {broken}")
        return 1
    except OSError as error:
        print(f"{path}: {error}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
