// SPDX-License-Identifier: Apache-2.0
package org.sstfilter;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;
import org.junit.rules.TemporaryFolder;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Filter;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.OptionsUtil;
import org.rocksdb.PerfLevel;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Statistics;
import org.rocksdb.TableFormatConfig;
import org.rocksdb.TableProperties;
import org.rocksdb.TablePropertiesCollectorFactory;
import org.rocksdb.TickerType;

/**
 * sstfilter from Java, in a RocksJava built with sstfilter inside (scripts/build-rocksjava.sh
 * --test runs it). The policies come from tests/policy_list.h, the one list the C++ suites and
 * db_stress use (system property sstfilter.policyList).
 */
public class SstFiltersTest {
  private static final int KEYS = 20_000;

  @Rule public TemporaryFolder folder = new TemporaryFolder();

  /** The uris between the BEGIN and END lines of tests/policy_list.h. */
  static List<String> policyUris() throws IOException {
    final String path = System.getProperty("sstfilter.policyList");
    assertNotNull("set -Dsstfilter.policyList to tests/policy_list.h", path);
    final List<String> uris = new ArrayList<>();
    boolean in = false;
    for (final String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
      if (line.contains("BEGIN kPolicyConfigs")) {
        in = true;
      } else if (line.contains("END kPolicyConfigs")) {
        in = false;
      } else if (in) {
        final String[] parts = line.split("\"");  // {"label", "uri"},
        assertTrue("unexpected line in policy_list.h: " + line, parts.length >= 4);
        uris.add(parts[3]);
      }
    }
    assertTrue("policy_list.h lists " + uris.size() + " policies", uris.size() >= 7);
    return uris;
  }

  /** "sstfilter.Bloom" for "sstfilter.Bloom:10" and for "{id=sstfilter.Bloom;...}". */
  static String policyNameOf(final String uri) {
    String s = uri.startsWith("{id=") ? uri.substring(4) : uri;
    int end = s.length();
    for (final char c : new char[] {':', ';', '}'}) {
      final int at = s.indexOf(c);
      if (at >= 0) end = Math.min(end, at);
    }
    return s.substring(0, end);
  }

  static byte[] key(final long i) {
    return String.format("key%012d", i).getBytes(StandardCharsets.UTF_8);
  }

  static void writeKeys(final RocksDB db, final long first, final long count)
      throws RocksDBException {
    for (long i = first; i < first + count; ++i) {
      db.put(key(2 * i), key(2 * i));  // even numbers present, odd ones absent
    }
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    }
  }

  static void expectPresent(final RocksDB db, final long count) throws RocksDBException {
    for (long i = 0; i < count; ++i) {
      assertArrayEquals("key " + 2 * i, key(2 * i), db.get(key(2 * i)));
    }
  }

  static void expectFilterPolicy(final RocksDB db, final String name) throws RocksDBException {
    final Map<String, TableProperties> tables = db.getPropertiesOfAllTables();
    assertFalse(tables.isEmpty());
    for (final TableProperties table : tables.values()) {
      assertEquals(name, table.getFilterPolicyName());
    }
  }

  /**
   * Every policy of policy_list.h, named in an options string loaded strictly from Java, writes
   * its name to the OPTIONS file; the database reopened from that file, loaded strictly, reads
   * every key back, and its new files have the same policy.
   */
  @Test
  public void everyPolicyRoundTripsThroughAnOptionsFileFromJava() throws Exception {
    for (final String uri : policyUris()) {
      final String name = policyNameOf(uri);
      final String path = folder.newFolder().getAbsolutePath();
      final Properties cfProps = new Properties();
      cfProps.setProperty("block_based_table_factory", "{filter_policy=" + uri + "}");
      final Properties dbProps = new Properties();
      dbProps.setProperty("create_if_missing", "true");
      dbProps.setProperty("listeners", "sstfilter.LeveledBudget");
      try (ConfigOptions strict = SstFilters.strictConfigOptions();
           ColumnFamilyOptions cf = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(strict, cfProps);
           DBOptions dbOptions = DBOptions.getDBOptionsFromProps(strict, dbProps)) {
        assertNotNull(uri, cf);
        assertNotNull(uri, dbOptions);
        final List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (RocksDB db = RocksDB.open(dbOptions, path,
                 Arrays.asList(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cf)),
                 handles)) {
          writeKeys(db, 0, KEYS);
          expectFilterPolicy(db, name);
          handles.forEach(ColumnFamilyHandle::close);
        }
      }
      final String optionsText = latestOptionsFile(path);
      final List<String> policyLines = Arrays.stream(optionsText.split("\n"))
                                           .map(String::trim)
                                           .filter(l -> l.startsWith("filter_policy="))
                                           .collect(Collectors.toList());
      assertEquals(optionsText, 1, policyLines.size());
      assertTrue(uri + " in the OPTIONS file: " + policyLines, policyLines.get(0).contains(name));
      assertTrue(optionsText.contains("sstfilter.LeveledBudget"));

      final List<ColumnFamilyDescriptor> loaded = new ArrayList<>();
      try (ConfigOptions strict = SstFilters.strictConfigOptions();
           DBOptions dbOptions = new DBOptions()) {
        OptionsUtil.loadLatestOptions(strict, path, dbOptions, loaded);
        assertEquals(1, loaded.size());
        final List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (RocksDB db = RocksDB.open(dbOptions, path, loaded, handles)) {
          expectPresent(db, KEYS);
          writeKeys(db, KEYS, KEYS);
          db.compactRange();
          expectPresent(db, 2 * KEYS);
          expectFilterPolicy(db, name);
          handles.forEach(ColumnFamilyHandle::close);
        } finally {
          loaded.forEach(d -> d.getOptions().close());
        }
      }
    }
  }

  static int occurrences(final String text, final String part) {
    int n = 0;
    for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) ++n;
    return n;
  }

  /**
   * Options that forward what is set on them to DBOptions and ColumnFamilyOptions of their own,
   * as framework adapters do (Kafka Streams hands its RocksDBConfigSetter one): the database opens
   * with those, not with the Options' own native object.
   */
  static final class ForwardingOptions extends Options {
    private final DBOptions db = new DBOptions().setCreateIfMissing(true);
    private final ColumnFamilyOptions cf = new ColumnFamilyOptions();

    @Override
    public Options setTableFormatConfig(final TableFormatConfig config) {
      cf.setTableFormatConfig(config);
      return this;
    }

    @Override
    public void close() {
      db.close();
      cf.close();
      super.close();
    }
  }

  /**
   * The listener and the range filter added to options that forward their settings reach the
   * objects the database opens with.
   */
  @Test
  public void listenerAndRangeFilterReachOptionsThatForward() throws Exception {
    final String path = folder.newFolder().getAbsolutePath();
    try (Filter policy = SstFilters.filterPolicy("sstfilter.Leveled:10");
         ForwardingOptions options = new ForwardingOptions()) {
      options.setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(policy));
      SstFilters.addLeveledBudgetListener(options);
      SstFilters.addRangeFilter(options, 16);
      final List<ColumnFamilyHandle> handles = new ArrayList<>();
      try (RocksDB db = RocksDB.open(options.db, path,
               Arrays.asList(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, options.cf)),
               handles)) {
        writeKeys(db, 0, KEYS);
        expectFilterPolicy(db, "sstfilter.Leveled");
        for (final TableProperties table : db.getPropertiesOfAllTables().values()) {
          assertTrue(table.getUserCollectedProperties().containsKey("sstfilter.range"));
        }
        handles.forEach(ColumnFamilyHandle::close);
      }
    }
    assertEquals(1, occurrences(latestOptionsFile(path), "sstfilter.LeveledBudget"));
  }

  static String latestOptionsFile(final String dbPath) throws IOException {
    try (Stream<Path> files = Files.list(Paths.get(dbPath))) {
      final List<Path> options = files.filter(p -> p.getFileName().toString().startsWith("OPTIONS-"))
                                     .sorted()
                                     .collect(Collectors.toList());
      assertFalse(options.isEmpty());
      return new String(Files.readAllBytes(options.get(options.size() - 1)), StandardCharsets.UTF_8);
    }
  }

  /**
   * SstFilters.filterPolicy in BlockBasedTableConfig, and the listener added in code: no written
   * key is missing after flushes, a compaction and a reopen, and the filters answer lookups of
   * absent keys (RocksDB's statistics count the reads they saved).
   */
  @Test
  public void policyFromCodeKeepsEveryKeyAndSavesReads() throws Exception {
    final String path = folder.newFolder().getAbsolutePath();
    for (final String uri : policyUris()) {
      try (Filter policy = SstFilters.filterPolicy(uri);
           Statistics statistics = new Statistics();
           Options options = new Options().setCreateIfMissing(true).setStatistics(statistics)) {
        options.setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(policy));
        SstFilters.addLeveledBudgetListener(options);
        SstFilters.addLeveledBudgetListener(options);  // a second call keeps the one listener
        try (RocksDB db = RocksDB.open(options, path)) {
          writeKeys(db, 0, KEYS);
          writeKeys(db, KEYS, KEYS);
          db.compactRange();
        }
        assertEquals(1, occurrences(latestOptionsFile(path), "sstfilter.LeveledBudget"));
        try (RocksDB db = RocksDB.open(options, path)) {
          expectPresent(db, 2 * KEYS);
          expectFilterPolicy(db, policyNameOf(uri));
          final long before = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
          int found = 0;
          for (long i = 0; i < 2 * KEYS; ++i) {
            if (db.get(key(2 * i + 1)) != null) ++found;
          }
          assertEquals(0, found);
          final long useful = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL) - before;
          assertTrue(uri + ": " + useful + " reads saved", useful > 2 * KEYS * 9 / 10);
        }
        RocksDB.destroyDB(path, options);
      }
    }
  }

  /** A bad string is a RocksDBException carrying sstfilter's message; strict loading fails. */
  @Test
  public void badInputIsAnExceptionWithSstfiltersMessage() throws Exception {
    expectMessage("sstfilter.Leveld", () -> SstFilters.filterPolicy("sstfilter.Leveld:10").close());
    expectMessage("memory_budget",
        () -> SstFilters.filterPolicy("{id=sstfilter.Leveled;memory_budget=1,5G}").close());
    try (Options options = new Options()) {
      expectMessage("bits_per_key", () -> SstFilters.addRangeFilter(options, 2));
    }
    try (ReadOptions read = new ReadOptions()) {
      expectMessage("bound", () -> SstFilters.skipEmptyFiles(read));
    }
    final Properties misspelt = new Properties();
    misspelt.setProperty("block_based_table_factory", "{filter_policy=sstfilter.Leveld:10}");
    try (ConfigOptions strict = SstFilters.strictConfigOptions()) {
      assertNull(ColumnFamilyOptions.getColumnFamilyOptionsFromProps(strict, misspelt));
    }
  }

  static void expectMessage(final String part, final ThrowingRunnable call) {
    final RocksDBException e = assertThrows(RocksDBException.class, call);
    assertTrue(e.getMessage(), e.getMessage().contains(part));
  }

  /**
   * The range filter collector and skipEmptyFiles: every file has a range filter; an iterator
   * over an empty range reads no block with skipEmptyFiles and reads one without it; one over a
   * range that holds keys finds them all.
   */
  @Test
  public void rangeFilterSkipsFilesWithNoKeyInTheBounds() throws Exception {
    final String path = folder.newFolder().getAbsolutePath();
    try (Options options = new Options().setCreateIfMissing(true)) {
      SstFilters.addRangeFilter(options, 8);
      SstFilters.addRangeFilter(options, 16);  // replaces the first: one range filter per file
      final List<TablePropertiesCollectorFactory> collectors =
          options.tablePropertiesCollectorFactory();
      assertEquals(1, collectors.size());
      collectors.forEach(TablePropertiesCollectorFactory::close);
      try (RocksDB db = RocksDB.open(options, path)) {
        writeKeys(db, 0, KEYS);
        for (final TableProperties table : db.getPropertiesOfAllTables().values()) {
          assertTrue(table.getUserCollectedProperties().containsKey("sstfilter.range"));
        }
        db.setPerfLevel(PerfLevel.ENABLE_COUNT);
        // Two empty ranges in blocks not read yet (key 2i is present, 2i + 1 absent), one at each
        // end of the file.
        db.getPerfContext().reset();
        assertEquals(0, count(db, key(1), key(2), false));
        assertTrue(db.getPerfContext().getBlockReadCount() > 0);
        db.getPerfContext().reset();
        assertEquals(0, count(db, key(2 * KEYS - 3), key(2 * KEYS - 2), true));
        assertEquals(0, db.getPerfContext().getBlockReadCount());
        assertEquals(100, count(db, key(0), key(200), true));  // 0, 2, ..., 198
      }
    }
  }

  static int count(final RocksDB db, final byte[] lower, final byte[] upper, final boolean skip)
      throws RocksDBException {
    try (Slice lo = new Slice(lower); Slice hi = new Slice(upper);
         ReadOptions read = new ReadOptions().setIterateLowerBound(lo).setIterateUpperBound(hi)) {
      if (skip) SstFilters.skipEmptyFiles(read);
      int n = 0;
      try (RocksIterator it = db.newIterator(read)) {
        for (it.seek(lower); it.isValid(); it.next()) ++n;
        it.status();
      }
      return n;
    }
  }

  /**
   * The JVM loads RocksJava's library once: two loadLibrary calls, two databases open at once
   * with one policy object, one librocksdbjni mapped into the process.
   */
  @Test
  public void theJvmLoadsTheLibraryOnce() throws Exception {
    RocksDB.loadLibrary();
    RocksDB.loadLibrary();
    try (Filter policy = SstFilters.filterPolicy("sstfilter.Leveled:10");
         Options options = new Options().setCreateIfMissing(true)) {
      options.setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(policy));
      try (RocksDB a = RocksDB.open(options, folder.newFolder().getAbsolutePath());
           RocksDB b = RocksDB.open(options, folder.newFolder().getAbsolutePath())) {
        writeKeys(a, 0, KEYS);
        writeKeys(b, 0, KEYS);
        expectPresent(a, KEYS);
        expectPresent(b, KEYS);
        expectFilterPolicy(a, "sstfilter.Leveled");
        expectFilterPolicy(b, "sstfilter.Leveled");
      }
    }
    final Set<String> libraries = new HashSet<>();
    for (final String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
      final int at = line.indexOf('/');
      if (at < 0) continue;
      final String file = line.substring(at);
      if (file.contains("rocksdbjni")) libraries.add(file);
      // No second copy of RocksDB or sstfilter, whose registry the policies would not be in.
      assertFalse(file, file.contains("librocksdb.so") || file.contains("libsstfilter"));
    }
    assertEquals(libraries.toString(), 1, libraries.size());
  }
}
