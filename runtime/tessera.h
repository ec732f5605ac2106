/// \file Everything a Tessera user includes: the kernel language (tessera::tl) and the runtime
/// (Device, Buffer, Stream, Event, Kernel), and tessera::version().
#pragma once

#include "core/lang/tl.h"
#include "core/support/error.h"
#include "runtime/autotune.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/stream.h"
#include "runtime/version.h"
