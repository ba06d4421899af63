// Precompiled for every target that touches tensors: ATen is ~9 CPU-seconds per translation unit.
#pragma once
#include <ATen/ATen.h>
#include <spdlog/spdlog.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
