// SSTFILTER_EXPORT marks the declarations that libsstfilter.so exports: the API in this folder.
// The library is built with hidden visibility, so everything else (core/, the policy classes, the
// adapters) stays private to it and cannot clash with another copy of the same code in the
// program; tests/install/exported_symbols_test.sh fails on any other exported symbol.
#pragma once

#define SSTFILTER_EXPORT __attribute__((visibility("default")))
