/// \file The help texts of `tessera` and of each subcommand (kept under 80 columns).
#include "tools/help.h"

#include <algorithm>

namespace tessera::tools {
namespace {

constexpr std::string_view kDevices =
    "usage: tessera devices [--verbose]\n"
    "\n"
    "Lists the devices of this machine, best first (Device::best() takes the first\n"
    "that is not a test device), and why a backend has none.\n"
    "\n"
    "columns:\n"
    "  name          what --device and Device::open take\n"
    "  kind          cuda, vulkan, host (the tile interpreter), simt (the SIMT\n"
    "                interpreter running the lowered code)\n"
    "  memory        memory for buffers (host, simt: the machine's RAM; vulkan:\n"
    "                the largest device-local heap)\n"
    "  subgroup      threads that run in lock step (a warp on CUDA)\n"
    "  shared        shared (workgroup) memory a block may use\n"
    "  matrix units  the tensor-core instructions dot may use, and their inputs\n"
    "  device        the device's own name\n"
    "\n"
    "options:\n"
    "  -v, --verbose  also each device's full description and target description\n"
    "                 (the text `tessera dump --target` accepts)\n";

constexpr std::string_view kDump =
    "usage: tessera dump KERNEL|FILE.tir [--stage STAGE] [--target PROFILE]\n"
    "                    [--device NAME] [--num-warps N] [--num-stages S]\n"
    "                    [--maxnreg R] [--fp-fusion] [--coopmat2]\n"
    "       tessera dump --list\n"
    "       tessera dump --batch IN_DIR --out OUT_DIR [--targets P,...] [--shard I/N]\n"
    "\n"
    "Prints what the compiler makes of a kernel at one stage, without a GPU: a\n"
    "kernel of the built-in catalogue (--list names them) or tile IR in a file,\n"
    "written by hand or captured from a program (TESSERA_CAPTURE=DIR, below).\n"
    "\n"
    "options:\n"
    "  --stage STAGE     ir (optimized tile IR, the default), layouts (the\n"
    "                    lowering plan), simt (per-thread SIMT IR), ptx, spirv\n"
    "  --target PROFILE  the target to compile for: cuda-sm_80, cuda-sm_86,\n"
    "                    cuda-sm_89, cuda-sm_90, cuda-sm_90a, vulkan-nvidia,\n"
    "                    vulkan-nvidia-coopmat2, vulkan-lavapipe, host, a simt\n"
    "                    device (simt:32) or a full target text (tessera devices\n"
    "                    --verbose prints them);\n"
    "                    default cuda-sm_90 for ptx, else vulkan-nvidia\n"
    "  --device NAME     compile for this device's target (cuda:0, vulkan:0 ...;\n"
    "                    `tessera devices`); nothing is launched\n"
    "  --num-warps N     launch option (default 4, or the captured file's)\n"
    "  --num-stages S    launch option (default 3, or the captured file's)\n"
    "  --maxnreg R       launch option: registers per thread at most (PTX only;\n"
    "                    default 0, no limit, or the captured file's)\n"
    "  --fp-fusion       launch option: a*b+c fused into fma (Triton's\n"
    "                    enable_fp_fusion; off by default here)\n"
    "  --coopmat2        launch option: dots on workgroup-scope cooperative\n"
    "                    matrices where the target has coopmat2 (off by default)\n"
    "  --list            the catalogue's kernels\n"
    "  --batch IN_DIR    every .tir file in IN_DIR, every stage for each target of\n"
    "                    --targets, as files in OUT_DIR/<file name>/\n"
    "\n"
    "A program run with TESSERA_CAPTURE=DIR writes the tile IR of each kernel it\n"
    "compiles to DIR/<kernel>.<hash>.tir, with its launch options; `tessera dump`\n"
    "compiles such a file again for any target.\n"
    "\n"
    "example:\n"
    "  TESSERA_CAPTURE=kernels ./my_program\n"
    "  tessera dump kernels/my_kernel.*.tir --stage ptx --target cuda-sm_90a\n";

constexpr std::string_view kCache =
    "usage: tessera cache [--clear]\n"
    "       tessera cache clear\n"
    "\n"
    "Shows where Tessera caches compiled code on disk, and how much each cache\n"
    "holds; --clear (or `clear`) removes what they hold. The caches live below\n"
    "one root: $TESSERA_CACHE_DIR, else $HOME/.cache/tessera; TESSERA_CACHE=0\n"
    "turns them all off.\n"
    "\n"
    "caches:\n"
    "  cuda       cubins the CUDA driver compiled from PTX, per kernel, device and\n"
    "             driver\n"
    "  vulkan     Vulkan pipeline caches, per device and driver\n"
    "  artifacts  compiled kernels (PTX, SPIR-V) with their launch facts, per\n"
    "             traced kernel, target, options and compiler build: a process's\n"
    "             first launch skips lowering and emission\n"
    "  autotune   the choices of tessera::autotune, per device, kernel,\n"
    "             configurations, key value and compiler build: a process's\n"
    "             first launch of a tuned kernel skips the search\n"
    "\n"
    "Every entry is recompiled (or searched) when missing, so clearing only costs\n"
    "compile time.\n"
    "The drivers' own caches (CUDA_CACHE_PATH, Mesa's and NVIDIA's shader caches)\n"
    "are theirs and are left alone.\n";

constexpr std::string_view kConformance =
    "usage: tessera conformance --device NAME[,NAME...] [--filter PATTERN]\n"
    "                           [--json FILE] [--seed S] [--quick] [--list]\n"
    "                           [--verbose] [--no-isolate] [--timeout SECONDS]\n"
    "\n"
    "Runs the conformance catalogue (tests/conformance) on each device against\n"
    "float64 references and prints a table: PASS, FAIL or SKIP (with the reason)\n"
    "per case and device, then 'N passed, N failed, N skipped'. Exit code 1 when\n"
    "a case failed.\n"
    "\n"
    "options:\n"
    "  --device NAME     a device to run on; repeat or separate with commas\n"
    "  --filter PATTERN  case names: '*' and '?' wildcards, else a substring\n"
    "  --json FILE       also write the results as JSON\n"
    "  --seed S          the inputs' seed (printed by every run, for replays)\n"
    "  --quick           small sizes\n"
    "  --list            the selected cases' names; runs nothing\n"
    "  -v, --verbose     each result's time in ms\n"
    "  --no-isolate      run cases in this process (default: in child processes,\n"
    "                    so a crash or hang fails only its case)\n"
    "  --timeout S       seconds a case may take in a child (default 300)\n";

constexpr std::string_view kFuzz =
    "usage: tessera fuzz --device NAME [--count N] [--seed S] [--ops N]\n"
    "                    [--program I] [--verbose] [--print]\n"
    "                    [--isolate | --no-isolate] [--timeout SECONDS]\n"
    "\n"
    "Generates random tile-IR programs and checks the device against the host\n"
    "interpreter (on host: optimized against unoptimized, bitwise). A failure is\n"
    "reduced and printed with the command that replays it. Exit code 1 when a\n"
    "program failed.\n"
    "\n"
    "options:\n"
    "  --device NAME   the device to check\n"
    "  --count N       programs to run (default 100)\n"
    "  --seed S        the run's seed (default 1)\n"
    "  --ops N         operations per program (default 24)\n"
    "  --program I     run only program I of the seed's sequence\n"
    "  -v, --verbose   a line per program\n"
    "  --print         print each generated program's tile IR (a seed gives the same\n"
    "                  programs with every compiler and standard library)\n"
    "  --isolate       check each program in a child process (the default on every\n"
    "                  device but host); --no-isolate in this process\n"
    "  --timeout S     seconds a program may take in a child (default 120)\n";

constexpr std::string_view kBench =
    "usage: tessera bench [--device NAME] [--filter PATTERN] [--json FILE]\n"
    "                     [--quick | --full] [--list] [--seed S]\n"
    "                     [--seconds-per-case S] [--peak tf32=T,fp16=T,bf16=T,int8=T]\n"
    "\n"
    "Measures kernels, compile times and launch overhead beside their floors\n"
    "(bytes over the measured copy bandwidth, flops over the peak) on one device\n"
    "(default: the best). docs/performance.md explains the columns.\n"
    "\n"
    "options:\n"
    "  --device NAME     the device to measure\n"
    "  --filter PATTERN  case names: '*' and '?' wildcards, else a substring;\n"
    "                    comma-separated\n"
    "  --json FILE       also write the rows as JSON\n"
    "  --quick           small sizes (the default on CPU devices; --full overrides)\n"
    "  --list            the cases' names; runs nothing\n"
    "  --seed S          the inputs' seed\n"
    "  --seconds-per-case S  time budget of one case\n"
    "  --peak K=T,...    TFLOP/s (int8: TOP/s) per matmul input type, for the\n"
    "                    compute floor\n";

constexpr std::string_view kTritonDiff =
    "usage: tessera triton-diff --device NAME --out DIR [--seed S] [--filter PATTERN]\n"
    "                           [--list]\n"
    "\n"
    "The Tessera half of the differential check against Triton: runs the seed\n"
    "kernels and one kernel per op family on the device with inputs drawn from\n"
    "the seed (default 18) and writes the inputs, outputs and manifest.json into\n"
    "DIR. bench/peers/diff.py runs the Triton twins on the same inputs and prints\n"
    "the table (kernel, device, max abs/rel diff, ulp, verdict); scripts/gpu-check\n"
    "--steps triton-diff does both.\n"
    "\n"
    "options:\n"
    "  --device NAME     the device to run on\n"
    "  --out DIR         where the files go (created)\n"
    "  --seed S          the inputs' seed\n"
    "  --filter PATTERN  case names: '*' and '?' wildcards, else a substring\n"
    "  --list            the cases' names and op families; runs nothing\n";

constexpr std::string_view kHelp =
    "usage: tessera help [COMMAND]\n"
    "\n"
    "Prints the help of COMMAND, or of tessera itself (as --help does).\n";

}  // namespace

const std::vector<CommandHelp>& commands() {
  static const std::vector<CommandHelp> all = {
      {"devices", "list the devices: memory, subgroup, shared memory, matrix units", kDevices},
      {"dump", "print a kernel's tile IR, SIMT IR, PTX or SPIR-V; no GPU needed", kDump},
      {"cache", "show the disk caches' folders and sizes; --clear empties them", kCache},
      {"conformance", "run the conformance catalogue on devices", kConformance},
      {"fuzz", "check a device against the host interpreter on random programs", kFuzz},
      {"bench", "measure kernels beside their floors", kBench},
      {"triton-diff", "write kernels' inputs and outputs to compare with Triton", kTritonDiff},
      {"help", "the help of a command", kHelp},
  };
  return all;
}

const CommandHelp* find_command(std::string_view name) {
  for (const CommandHelp& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::string command_names() {
  std::string names;
  for (const CommandHelp& c : commands())
    names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

std::string general_help() {
  std::string text =
      "usage: tessera COMMAND [OPTIONS]\n"
      "       tessera --help | --version\n"
      "\n"
      "Tessera's command-line tool: the devices of this machine, a kernel's code at\n"
      "every stage, the disk caches, conformance, fuzzing and benchmarks.\n"
      "\n"
      "commands:\n";
  size_t width = 0;
  for (const CommandHelp& c : commands()) width = std::max(width, c.name.size());
  for (const CommandHelp& c : commands())
    text += "  " + std::string(c.name) + std::string(width + 2 - c.name.size(), ' ') +
            std::string(c.summary) + "\n";
  text +=
      "\n"
      "options:\n"
      "  -h, --help   this help; `tessera COMMAND --help` shows a command's\n"
      "  --version    the version of Tessera\n"
      "\n"
      "environment (docs/cli.md and README.md say more):\n"
      "  TESSERA_CAPTURE=DIR    programs write each kernel's tile IR to DIR, for\n"
      "                         `tessera dump FILE.tir`\n"
      "  TESSERA_CACHE_DIR=DIR  where the disk caches live (`tessera cache`)\n"
      "  TESSERA_DUMP=STAGE,... programs print each kernel's stages as they compile\n"
      "\n"
      "Exit codes: 0 success, 1 an error or a failed check, 2 bad usage.\n";
  return text;
}

}  // namespace tessera::tools
