/// \file The words of a device fault that every device writes alike: an assert's message with
/// its reported values (ir::AssertOp) and the invocation that failed, as CUDA's device asserts
/// name it. The interpreters and the GPU runtimes (which read the targets' fault records) share
/// them, so that a fault reads the same wherever it happened.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera {

/// `message` with the reported values written in: `{k}` becomes values[k] as a signed decimal,
/// `{k:x}` as 0x and 16 hex digits. Without values the message is returned as it is (a user's
/// braces stay).
std::string format_assert_message(std::string_view message, std::span<const uint64_t> values);

/// "program (x, y, z), thread t" and, when rank > 0, ", index (i, j)" (at most 4 indices).
std::string describe_invocation(const uint32_t (&program)[3], uint32_t thread, uint32_t rank,
                                const int32_t (&index)[4]);

}  // namespace tessera
