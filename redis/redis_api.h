// SPDX-License-Identifier: Apache-2.0
// Redis's module API (redismodule.h, from the redis source package Debian ships: BSD-3-Clause),
// for every file of the module. The header defines its API's function pointers where it is
// included, as C's tentative definitions; C++ has none, so every file but module.cc, which
// defines SSTFILTER_REDIS_DEFINE_API first, sees them as extern declarations.
#pragma once

#ifndef SSTFILTER_REDIS_DEFINE_API
#define REDISMODULE_API extern
#endif
#include <redismodule.h>
