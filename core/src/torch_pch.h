// Precompiled for every target that touches tensors: ATen is ~9 CPU-seconds per translation unit.
#pragma once
#include <ATen/ATen.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>
