// SPDX-License-Identifier: Apache-2.0
// SSTFILTER_EXPORT marks the declarations that libsstfilter.so (the plugin) and
// libsstfilter_core.so (the filters for applications) export: the API in this folder. The libraries
// are built with hidden visibility, so everything else (core/, the policy classes, the adapters)
// stays private to them and cannot clash with another copy of the same code in the program;
// tests/install/exported_symbols_test.sh fails on any other exported symbol.
#pragma once

#define SSTFILTER_EXPORT __attribute__((visibility("default")))
