// SPDX-License-Identifier: Apache-2.0
package org.sstfilter;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Filter;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * sstfilter for RocksJava: its filter policies, the {@code sstfilter.LeveledBudget} listener and
 * the {@code sstfilter.RangeFilter} collector, for a RocksJava whose JNI library was built with
 * sstfilter inside it ({@code scripts/build-rocksjava.sh}; docs/java.md). With any other
 * {@code rocksdbjni} jar, the first call fails with {@link UnsatisfiedLinkError}.
 *
 * <p>A policy by string, for {@link org.rocksdb.BlockBasedTableConfig#setFilterPolicy}:
 *
 * <pre>{@code
 * BlockBasedTableConfig table = new BlockBasedTableConfig()
 *     .setFilterPolicy(SstFilters.filterPolicy("sstfilter.Leveled:10"));
 * options.setTableFormatConfig(table);
 * SstFilters.addLeveledBudgetListener(options);
 * }</pre>
 *
 * <p>The same names work in options strings and OPTIONS files ({@code
 * filter_policy=sstfilter.Leveled:10}, {@code listeners=sstfilter.LeveledBudget}, {@code
 * table_properties_collectors=sstfilter.RangeFilter}): load them with {@link
 * #strictConfigOptions()}, so that a misspelt name is an error rather than no filter.
 */
public final class SstFilters {
  static {
    RocksDB.loadLibrary();
  }

  private SstFilters() {}

  /**
   * A filter policy by string: any of sstfilter's ({@code sstfilter.Leveled:10}, {@code
   * sstfilter.BumpedRibbon:10}, {@code {id=sstfilter.Leveled;memory_budget=2G}}, ...) or RocksDB's own
   * ({@code ribbonfilter:10}). Pass it to {@link
   * org.rocksdb.BlockBasedTableConfig#setFilterPolicy}; close it after the databases that use it.
   *
   * @throws RocksDBException with sstfilter's message if the string names no policy or a bad
   *     option
   */
  public static Filter filterPolicy(final String uri) throws RocksDBException {
    return new SstFilterPolicy(newFilterPolicy(uri));
  }

  /**
   * Adds the {@code sstfilter.LeveledBudget} listener to {@code options} (once: a second call
   * keeps the first), and to the DBOptions a subclass of Options forwards its settings to (Kafka
   * Streams' adapter). {@code sstfilter.Leveled} needs it to allocate over the tree as it is. Call
   * it after {@link Options#setListeners}, which replaces the listeners; and do not call {@link
   * Options#listeners()} afterwards: RocksJava's getter reads every listener as one written in
   * Java.
   */
  public static void addLeveledBudgetListener(final Options options) throws RocksDBException {
    addLeveledBudgetListener(options.getNativeHandle(), true);
    for (final DBOptions forwarded : forwardedTo(options, DBOptions.class)) {
      addLeveledBudgetListener(forwarded);
    }
  }

  /** {@link #addLeveledBudgetListener(Options)} for {@link DBOptions}. */
  public static void addLeveledBudgetListener(final DBOptions options) throws RocksDBException {
    addLeveledBudgetListener(options.getNativeHandle(), false);
  }

  /**
   * Adds the {@code sstfilter.RangeFilter} collector at {@code bitsPerKey} (4 to 48; 16 is the
   * default of the options string) to the column family options, and to the ColumnFamilyOptions
   * a subclass of Options forwards its settings to: each new table file gets a range filter that
   * {@link #skipEmptyFiles} reads. A second call replaces the first collector. Call it after
   * {@code setTablePropertiesCollectorFactory}, which replaces the collectors.
   *
   * @throws RocksDBException if bitsPerKey is outside 4 to 48
   */
  public static void addRangeFilter(final Options options, final double bitsPerKey)
      throws RocksDBException {
    addRangeFilter(options.getNativeHandle(), true, bitsPerKey);
    for (final ColumnFamilyOptions forwarded : forwardedTo(options, ColumnFamilyOptions.class)) {
      addRangeFilter(forwarded, bitsPerKey);
    }
  }

  /** {@link #addRangeFilter(Options, double)} for {@link ColumnFamilyOptions}. */
  public static void addRangeFilter(final ColumnFamilyOptions options, final double bitsPerKey)
      throws RocksDBException {
    addRangeFilter(options.getNativeHandle(), false, bitsPerKey);
  }

  /**
   * Makes iterators opened with {@code readOptions} skip the table files whose range filter says
   * they hold no key between its iterate bounds. Set the bounds first ({@link
   * ReadOptions#setIterateLowerBound}, {@link ReadOptions#setIterateUpperBound}), keep their
   * slices open while iterating, and call this again after setting other bounds.
   *
   * @throws RocksDBException if neither bound is set
   */
  public static void skipEmptyFiles(final ReadOptions readOptions) throws RocksDBException {
    skipEmptyFiles(readOptions.getNativeHandle());
  }

  /**
   * ConfigOptions that report what RocksDB's defaults drop silently: an unknown or unsupported
   * name or option (a misspelt filter policy, say) is an error instead of no filter. They read
   * strings as not escaped: escaped input lets a misspelt policy inside {@code
   * block_based_table_factory={...}} through as no filter. Use them for
   * {@link ColumnFamilyOptions#getColumnFamilyOptionsFromProps(ConfigOptions,
   * java.util.Properties)} and {@link org.rocksdb.OptionsUtil#loadLatestOptions}.
   */
  public static ConfigOptions strictConfigOptions() throws RocksDBException {
    final ConfigOptions config = new ConfigOptions();
    try {
      makeStrict(config.getNativeHandle());
    } catch (final RocksDBException | RuntimeException e) {
      config.close();
      throw e;
    }
    return config;
  }

  /**
   * The {@code type} objects a subclass of Options keeps in fields of its own. Such a subclass
   * forwards what is set on it to them, and the database opens with them, not with the Options'
   * own native object: Kafka Streams hands its {@code RocksDBConfigSetter} such an adapter. What
   * is added to the Options is added to each of them too.
   */
  private static <T> List<T> forwardedTo(final Options options, final Class<T> type) {
    final List<T> found = new ArrayList<>();
    for (Class<?> c = options.getClass(); c != Options.class; c = c.getSuperclass()) {
      for (final Field field : c.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers()) || !type.isAssignableFrom(field.getType())) {
          continue;
        }
        try {
          field.setAccessible(true);
          final Object value = field.get(options);
          if (value != null) found.add(type.cast(value));
        } catch (final IllegalAccessException | RuntimeException e) {
          throw new IllegalArgumentException("sstfilter: cannot reach " + c.getName() + "."
                  + field.getName() + ", where these options forward their settings: "
                  + "add sstfilter's listener and collector to it directly",
              e);
        }
      }
    }
    return found;
  }

  private static native long newFilterPolicy(String uri) throws RocksDBException;

  private static native void addLeveledBudgetListener(long handle, boolean isOptions)
      throws RocksDBException;

  private static native void addRangeFilter(long handle, boolean isOptions, double bitsPerKey)
      throws RocksDBException;

  private static native void skipEmptyFiles(long readOptionsHandle) throws RocksDBException;

  private static native void makeStrict(long configOptionsHandle) throws RocksDBException;
}
