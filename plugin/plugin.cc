// The RocksDB plugin: filter policies registered in RocksDB's ObjectLibrary (its own issue).
#include "plugin/filter_bits_interface.h"
