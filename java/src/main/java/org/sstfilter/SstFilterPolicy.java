// SPDX-License-Identifier: Apache-2.0
package org.sstfilter;

import org.rocksdb.Filter;

/**
 * A filter policy made by {@link SstFilters#filterPolicy}. Its handle is what RocksJava's own
 * filters hold (a {@code std::shared_ptr<const FilterPolicy>}), so {@link Filter} closes it.
 */
final class SstFilterPolicy extends Filter {
  SstFilterPolicy(final long nativeHandle) {
    super(nativeHandle);
  }
}
