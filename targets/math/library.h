/// \file The math library of both targets, whole: the Algorithms class (algorithms.h) with every
/// family of its functions defined. Include this to instantiate Algorithms over a backend.
#pragma once

#include "targets/math/algebraic.h"
#include "targets/math/algorithms.h"
#include "targets/math/erf.h"
#include "targets/math/exp_log.h"
#include "targets/math/trig.h"
