/// \file The on-disk cache of cubins JIT-compiled from PTX: `$TESSERA_CACHE_DIR/cuda/<key>.cubin`
/// (default ~/.cache/tessera/cuda), keyed by a hash of the PTX (runtime/hash.h: microseconds for
/// a large kernel, as a warm launch hashes it), the device's name, the driver version and the
/// cache format. Writes are atomic (temporary file, then rename); an entry that
/// fails its length or checksum check reads as absent, so it is compiled and written again.
#pragma once

#include <optional>
#include <string>

namespace tessera::rt::cuda {

/// 32 hex digits identifying the cubin of `ptx` for a device and driver.
std::string cubin_key(const std::string& ptx, const std::string& device_name, int driver_version);
/// The cached cubin, if present and intact (and caching is possible).
std::optional<std::string> cubin_read(const std::string& key);
/// Stores a cubin; failures (read-only or missing home) only mean no caching.
void cubin_write(const std::string& key, const std::string& cubin);
/// Removes an entry (one the driver refused to load).
void cubin_remove(const std::string& key);
/// The cache's folder ("" when neither TESSERA_CACHE_DIR nor HOME is set).
std::string cubin_cache_dir();

}  // namespace tessera::rt::cuda
