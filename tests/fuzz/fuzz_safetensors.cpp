// libFuzzer target: the safetensors reader (header length, JSON, dtypes, shapes, offsets, metadata) on
// arbitrary bytes. Every input must either open, with every tensor's bytes inside the mapping, or be
// refused with SafetensorsError; anything else (a crash, a sanitizer report, another exception) is a bug.

#include "fuzz_support.h"
#include "sapiens/model/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The reader maps a file, so each input goes through one (in /dev/shm when there is one).
  static const std::string path = sapiens::fuzz::scratchDir("safetensors") + "/input.safetensors";
  sapiens::fuzz::writeFile(path, data, size);
  try {
    const sapiens::SafetensorsFile st = sapiens::SafetensorsFile::open(path);
    unsigned checksum = 0;
    for (const sapiens::TensorEntry& entry : st.tensors()) {
      if (entry.end < entry.begin || entry.end > st.fileSize()) std::abort();
      // Touch the first and last byte of every tensor: ASan catches reads outside the mapping.
      if (entry.byteSize() > 0) {
        const std::byte* bytes = st.data(entry);
        checksum += unsigned(bytes[0]) + unsigned(bytes[entry.byteSize() - 1]);
      }
      if (st.find(entry.name) == nullptr) std::abort();
    }
    for (const auto& [key, value] : st.metadata()) checksum += unsigned(key.size() + value.size());
    if (checksum == 0xFFFFFFFFu) std::fputc(' ', stderr);  // keeps the reads
  } catch (const sapiens::SafetensorsError&) {
  }
  return 0;
}
