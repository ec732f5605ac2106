/// \file `tessera dump`: prints what the compiler makes of a kernel at each stage, for one kernel
/// (a catalogue name or a captured .tir file) or for a whole folder of captured kernels.
///
///   tessera dump --list
///   tessera dump <kernel|FILE.tir> [--stage ir|layouts|simt|spirv|ptx]
///                [--target PROFILE | --device NAME] [--num-warps N] [--num-stages S]
///   tessera dump --batch IN_DIR --out OUT_DIR [--targets P1,P2,...] [--shard I/N]
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

/// Runs the subcommand with the arguments after `dump`; returns the exit code (2: bad usage; the
/// help text is in tools/help.cpp).
int dump_main(const std::vector<std::string>& args);

}  // namespace tessera::tools
