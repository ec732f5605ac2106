/// \file Device print on Vulkan (target::Artifact::PrintRecord): a kernel cannot call printf, so
/// each print appends a record to the stream's host-visible print buffer, and once the launch's
/// submission has finished the stream writes the records as the interpreters write their lines
/// (`pid (x, y, z) idx (i, j) <prefix><value>`, core/interp/interpreter.h), with their formatter.
///
/// The buffer: kDefaultPrintBytes (4 MiB: 80659 records of 52 bytes after the 8-byte header) per
/// stream, allocated at the stream's first launch that prints; TESSERA_PRINT_BUFFER=BYTES, read
/// then, sets another size. Records past its end are dropped and counted: "dropped N print
/// records (buffer of K bytes full)" on stderr after the lines that fit.
///
/// The order of the lines, which the device's invocations do not give: launch by launch, in the
/// order they were made; within a launch by program, in the interpreters' program order (x
/// fastest, then y, then z); within a program by loop passes begun (the kernel counts them), then
/// by print statement (in program order), then by the element's index (row-major, as the tile
/// interpreter prints a tile), then by thread. That is the tile interpreter's order wherever a
/// program's loops are uniform, as tile-level loops are.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "core/interp/scalar.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/stream.h"

namespace tessera::rt::vk {
namespace {

using Header = target::Artifact::PrintHeader;
using Record = target::Artifact::PrintRecord;
using Site = target::Artifact::PrintSite;

constexpr VkDeviceSize kDefaultPrintBytes = VkDeviceSize{4} << 20;

/// TESSERA_PRINT_BUFFER, or the default; at least the header.
VkDeviceSize print_buffer_bytes() {
  const char* env = std::getenv("TESSERA_PRINT_BUFFER");
  VkDeviceSize bytes = kDefaultPrintBytes;
  if (env && *env) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (*end != '\0')
      fail(ErrorKind::Argument, "TESSERA_PRINT_BUFFER must be a number of bytes, got '", env, "'");
    bytes = v;
  }
  return std::max<VkDeviceSize>(bytes, sizeof(Header));
}

uint32_t capacity_of(VkDeviceSize bytes) {
  return static_cast<uint32_t>(
      std::min<VkDeviceSize>((bytes - sizeof(Header)) / sizeof(Record), UINT32_MAX));
}

/// True when record a prints before record b (both of one launch): the order in the file comment.
bool before(const Record& a, const Record& b, const std::vector<Site>& sites) {
  for (int k = 2; k >= 0; --k)
    if (a.program[k] != b.program[k]) return a.program[k] < b.program[k];
  if (a.pass != b.pass) return a.pass < b.pass;
  const uint32_t sa = a.code - 1 < sites.size() ? sites[a.code - 1].statement : UINT32_MAX;
  const uint32_t sb = b.code - 1 < sites.size() ? sites[b.code - 1].statement : UINT32_MAX;
  if (sa != sb) return sa < sb;
  for (int k = 0; k < 4; ++k)
    if (a.index[k] != b.index[k]) return a.index[k] < b.index[k];
  return a.thread < b.thread;
}

/// One line, as the interpreters print it.
std::string line_of(const Record& r, const VulkanKernel& k) {
  std::ostringstream os;
  os << "pid (" << r.program[0] << ", " << r.program[1] << ", " << r.program[2] << ") ";
  if (r.code == 0 || r.code > k.prints().size())
    return os.str() + "(kernel " + k.name + ": unknown print site " + std::to_string(r.code) +
           ")\n";
  const Site& site = k.prints()[r.code - 1];
  if (site.rank > 0) {
    os << "idx (";
    for (int i = 0; i < site.rank; ++i) os << (i ? ", " : "") << r.index[i];
    os << ") ";
  }
  std::byte bits[8];
  std::memcpy(bits, r.value, sizeof bits);  // little-endian: the low word's bytes first
  os << site.prefix << interp::format_scalar(site.dtype, site.is_ptr, bits, site.hex) << "\n";
  return os.str();
}

}  // namespace

void VulkanStream::attach_print_buffer(const std::shared_ptr<const VulkanKernel>& k,
                                       std::span<std::byte> params) {
  if (k->print_offset() < 0) return;
  Context& ctx = *shared_.ctx;
  if (!print_buffer_) {
    print_bytes_ = print_buffer_bytes();
    print_buffer_ = std::make_unique<BoundBuffer>(
        create_host_buffer(ctx, print_bytes_, "the print buffer of kernel " + k->name));
    std::memset(print_buffer_->mapped, 0, sizeof(Header));
  }
  // The buffer is emptied once no submitted launch writes to it: one submission's launches share
  // it, and a launch after those of an earlier submission waits for them.
  if (!print_sources_.empty() && print_sources_.back().value <= submitted_)
    wait_locked(print_sources_.back().value);
  const uint32_t tag = ++print_tag_;
  const uint64_t address = print_buffer_->address;
  const uint32_t capacity = capacity_of(print_bytes_);
  const size_t at = static_cast<size_t>(k->print_offset());
  TESSERA_CHECK(at + 16 <= params.size(), "kernel ", k->name, ": print channel past the block");
  std::memcpy(params.data() + at, &address, sizeof address);
  std::memcpy(params.data() + at + 8, &capacity, sizeof capacity);
  std::memcpy(params.data() + at + 12, &tag, sizeof tag);
  print_sources_.push_back({tag, submitted_ + 1, k});
  batch_.host_read = true;  // the records are read by the host once the batch is done
}

void VulkanStream::collect_print_locked() {
  if (print_sources_.empty() || print_sources_.front().value > completed_) return;
  const auto* base = static_cast<const std::byte*>(print_buffer_->mapped);
  Header header;
  std::memcpy(&header, base, sizeof header);
  const uint32_t stored = std::min(header.count, capacity_of(print_bytes_));
  std::vector<Record> records(stored);
  if (stored > 0) std::memcpy(records.data(), base + sizeof(Header), stored * sizeof(Record));
  std::string text;
  while (!print_sources_.empty() && print_sources_.front().value <= completed_) {
    const PrintSource& s = print_sources_.front();
    std::vector<Record> mine;
    for (const Record& r : records)
      if (r.launch == s.tag) mine.push_back(r);
    const auto& sites = s.kernel->prints();
    std::stable_sort(mine.begin(), mine.end(),
                     [&](const Record& a, const Record& b) { return before(a, b, sites); });
    for (const Record& r : mine) text += line_of(r, *s.kernel);
    print_sources_.pop_front();
  }
  if (!text.empty()) std::cout << text << std::flush;
  if (header.dropped > 0)
    std::cerr << "dropped " << header.dropped << " print records (buffer of " << print_bytes_
              << " bytes full)" << std::endl;
  // Launches still listed are in the open batch (attach_print_buffer waits for earlier
  // submissions): nothing writes to the buffer now.
  if (print_sources_.empty() || print_sources_.front().value > submitted_)
    std::memset(print_buffer_->mapped, 0, sizeof(Header));
}

}  // namespace tessera::rt::vk
