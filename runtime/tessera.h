/// \file Everything a Tessera user includes: the kernel language (tessera::tl) and the runtime
/// (Device, Buffer, Stream, Event, Kernel, AotKernel), and tessera::version().
#pragma once

#include "../core/lang/tl.h"
#include "../core/support/error.h"
#include "aot.h"
#include "autotune.h"
#include "buffer.h"
#include "device.h"
#include "kernel.h"
#include "stream.h"
#include "version.h"
