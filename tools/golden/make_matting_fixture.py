#!/usr/bin/env python3
"""Makes tests/fixtures/golden/matting from the official MattingHead (not part of the build or the tests).

The official backbone's output is taken from the normal fixture (io.safetensors "backbone_out", made by the
official code with the backbone in normal/model.safetensors); the official head file runs on it under
Debian's python3-torch, with its registry import replaced by a stub (it only builds the loss). Weights follow
the fixtures' randomisation recipe (golden/README.md). Usage:

    tools/golden/make_matting_fixture.py OFFICIAL/matting_head.py tests/fixtures/golden

where OFFICIAL/matting_head.py is sapiens/dense/src/models/heads/matting_head.py of the official tree.
"""
import hashlib
import json
import os
import struct
import sys
import types

import numpy as np
import torch
import torch.nn as nn

HEAD_KWARGS = dict(in_channels=32, upsample_channels=[24, 16, 12, 8], conv_out_channels=[8, 6],
                   conv_kernel_sizes=[3, 3], out_channels=4)
HEAD_SEED = 1107
DTYPES = {"F32": np.float32, "BF16": np.uint16, "F64": np.float64, "I64": np.int64, "U8": np.uint8}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        begin, end = spec["data_offsets"]
        tensors[name] = (spec["dtype"], np.frombuffer(data[begin:end], DTYPES[spec["dtype"]]).reshape(spec["shape"]))
    return tensors, header.get("__metadata__", {})


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        dtype, array = tensors[name]
        blob = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_official_head(path):
    source = open(path, encoding="utf-8").read()
    registry = types.SimpleNamespace(register_module=lambda: (lambda cls: cls), build=lambda cfg: nn.Identity())
    stubbed = source.replace("from .....registry import MODELS", "MODELS = _registry")
    if stubbed == source:
        sys.exit(f"{path}: the registry import is not where it was expected")
    module = {"_registry": registry, "__name__": "official_matting_head"}
    exec(compile(stubbed, path, "exec"), module)
    return module["MattingHead"], hashlib.sha256(source.encode()).hexdigest()


def randomise(head, seed):
    generator = torch.Generator().manual_seed(seed)
    for module in head.modules():
        if isinstance(module, nn.Conv2d):
            out_ch, in_ch, kh, kw = module.weight.shape
            std = min(max(1.0 / (in_ch * kh * kw) ** 0.5, 0.02), 0.2)
            with torch.no_grad():
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * std)
                module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.05)


def main():
    official, golden = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    MattingHead, source_hash = load_official_head(official)
    head = MattingHead(**HEAD_KWARGS).eval()
    randomise(head, HEAD_SEED)
    normal_model, _ = read_safetensors(os.path.join(golden, "normal", "model.safetensors"))
    normal_io, _ = read_safetensors(os.path.join(golden, "normal", "io.safetensors"))
    featmap = torch.from_numpy(normal_io["backbone_out"][1].copy())
    with torch.no_grad():
        alpha = head(featmap)

    out = os.path.join(golden, "matting")
    os.makedirs(out, exist_ok=True)
    model = {k: v for k, v in normal_model.items() if k.startswith("backbone.")}
    for name, tensor in head.state_dict().items():
        model["decode_head." + name] = ("F32", tensor.numpy())
    write_safetensors(os.path.join(out, "model.safetensors"), model,
                      {"format": "pt", "task": "matting", "fixture": "A/matting"})
    # The backbone's tensors are the normal fixture's (same weights, same input); its head output is not.
    io = {name: tensor for name, tensor in normal_io.items() if name != "normal"}
    io["matting"] = ("F32", alpha.numpy())
    write_safetensors(os.path.join(out, "io.safetensors"), io, {"fixture": "A/matting"})
    config = {
        "task": "matting",
        "model_class": "MattingEstimator",
        "backbone": "the normal fixture's (backbone.* of normal/model.safetensors, same keys)",
        "head": {"type": "MattingHead", "kwargs": HEAD_KWARGS, "seed": HEAD_SEED,
                 "source": "sapiens/dense/src/models/heads/matting_head.py (official)",
                 "source_sha256": source_hash},
        "randomisation": {"Conv2d.weight": "normal(0, std=clip(1/sqrt(in*kh*kw), 0.02, 0.2))",
                          "*.bias": "normal(0, 0.05)", "InstanceNorm2d": "affine=False: no parameters"},
        "run": f"float32, eval, torch.no_grad(), 1 thread, torch {torch.__version__}",
        "io": {"input, backbone_out and the backbone intermediates": "normal/io.safetensors's (the official "
               "backbone on the same input with the same weights)",
               "matting": "MattingHead(backbone_out): sigmoid of conv_matting, B x 4 x 64 x 48 "
                          "(foreground RGB premultiplied, alpha last)"},
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    print(f"wrote {out}: matting {tuple(alpha.shape)}, alpha mean {alpha[:, 3].mean():.4f}")


if __name__ == "__main__":
    main()
