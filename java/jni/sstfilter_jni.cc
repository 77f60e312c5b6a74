// SPDX-License-Identifier: Apache-2.0
// The native half of org.sstfilter.SstFilters (java/src/main/java/org/sstfilter/SstFilters.java),
// compiled into RocksJava's own JNI library when RocksDB is built with sstfilter inside it and
// WITH_JNI=ON (scripts/build-rocksjava.sh; CMakeLists.txt adds this file to the rocksdbjni
// target). It lives there, not in a library of its own, because RocksJava links RocksDB
// statically: a separately loaded libsstfilter.so would register its policies into another copy
// of RocksDB's ObjectLibrary, and its FilterPolicy objects would not be the JNI library's.
//
// Handles are RocksJava's: a Filter's is a heap-allocated std::shared_ptr<const FilterPolicy>
// (org.rocksdb.Filter deletes it on close), the options' are the C++ objects themselves. Errors
// become an org.rocksdb.RocksDBException carrying sstfilter's message; no C++ exception crosses
// into the JVM.
#include <jni.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "sstfilter/leveled_budget.h"
#include "sstfilter/range_filter.h"
#include "sstfilter/sstfilter.h"

namespace {

// Throws org.rocksdb.RocksDBException(message) in the JVM (after the native method returns).
void ThrowRocksDbException(JNIEnv* env, const std::string& message) {
  jclass exception = env->FindClass("org/rocksdb/RocksDBException");
  if (exception == nullptr) return;  // FindClass has thrown NoClassDefFoundError
  env->ThrowNew(exception, message.c_str());
  env->DeleteLocalRef(exception);
}

// The Java string as UTF-8 (modified UTF-8, as JNI gives it: the same for the ASCII of option
// strings); false with an exception pending if the JVM could not give it.
bool ToString(JNIEnv* env, jstring text, std::string* out) {
  if (text == nullptr) {
    ThrowRocksDbException(env, "sstfilter: null string");
    return false;
  }
  struct Chars {  // released however the copy ends
    JNIEnv* env;
    jstring text;
    const char* chars;
    ~Chars() {
      if (chars != nullptr) env->ReleaseStringUTFChars(text, chars);
    }
  } utf{env, text, env->GetStringUTFChars(text, nullptr)};
  if (utf.chars == nullptr) return false;  // OutOfMemoryError pending
  out->assign(utf.chars, static_cast<size_t>(env->GetStringUTFLength(text)));
  return true;
}

// Runs body, turning a C++ exception into a RocksDBException: nothing may unwind into the JVM.
template <typename Body>
void Guarded(JNIEnv* env, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    ThrowRocksDbException(env, std::string("sstfilter: ") + e.what());
  } catch (...) {
    ThrowRocksDbException(env, "sstfilter: unknown C++ exception");
  }
}

ROCKSDB_NAMESPACE::DBOptions* DbOptionsOf(jlong handle, jboolean is_options) {
  if (is_options) return reinterpret_cast<ROCKSDB_NAMESPACE::Options*>(handle);
  return reinterpret_cast<ROCKSDB_NAMESPACE::DBOptions*>(handle);
}

ROCKSDB_NAMESPACE::ColumnFamilyOptions* CfOptionsOf(jlong handle, jboolean is_options) {
  if (is_options) return reinterpret_cast<ROCKSDB_NAMESPACE::Options*>(handle);
  return reinterpret_cast<ROCKSDB_NAMESPACE::ColumnFamilyOptions*>(handle);
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_org_sstfilter_SstFilters_newFilterPolicy(JNIEnv* env, jclass,
                                                                      jstring juri) {
  jlong handle = 0;
  Guarded(env, [&] {
    std::string uri;
    if (!ToString(env, juri, &uri)) return;
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;
    const ROCKSDB_NAMESPACE::Status s = sstfilter::NewFilterPolicy(uri, &policy);
    if (!s.ok()) return ThrowRocksDbException(env, s.ToString());
    if (policy == nullptr) {
      return ThrowRocksDbException(env, "sstfilter: '" + uri + "' names no filter policy");
    }
    handle = reinterpret_cast<jlong>(
        new std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>(std::move(policy)));
  });
  return handle;
}

JNIEXPORT void JNICALL Java_org_sstfilter_SstFilters_addLeveledBudgetListener(JNIEnv* env, jclass,
                                                                              jlong options,
                                                                              jboolean is_options) {
  Guarded(env, [&] {
    std::vector<std::shared_ptr<ROCKSDB_NAMESPACE::EventListener>>& listeners =
        DbOptionsOf(options, is_options)->listeners;
    for (const auto& listener : listeners) {
      if (listener != nullptr && std::string(listener->Name()) == sstfilter::kLeveledBudgetName) {
        return;  // one is enough: it serves every database and column family of the options
      }
    }
    listeners.push_back(sstfilter::NewLeveledBudgetListener());
  });
}

JNIEXPORT void JNICALL Java_org_sstfilter_SstFilters_addRangeFilter(JNIEnv* env, jclass,
                                                                    jlong options,
                                                                    jboolean is_options,
                                                                    jdouble bits_per_key) {
  Guarded(env, [&] {
    std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory> factory;
    const ROCKSDB_NAMESPACE::Status s =
        sstfilter::NewRangeFilterCollectorFactory(bits_per_key, &factory);
    if (!s.ok()) return ThrowRocksDbException(env, s.ToString());
    auto& factories = CfOptionsOf(options, is_options)->table_properties_collector_factories;
    for (auto& existing : factories) {
      if (existing != nullptr && std::string(existing->Name()) == sstfilter::kRangeFilterName) {
        existing = factory;  // one range filter per file: the last call's
        return;
      }
    }
    factories.push_back(factory);
  });
}

JNIEXPORT void JNICALL Java_org_sstfilter_SstFilters_skipEmptyFiles(JNIEnv* env, jclass,
                                                                    jlong read_options) {
  Guarded(env, [&] {
    const ROCKSDB_NAMESPACE::Status s =
        sstfilter::SkipEmptyFiles(reinterpret_cast<ROCKSDB_NAMESPACE::ReadOptions*>(read_options));
    if (!s.ok()) ThrowRocksDbException(env, s.ToString());
  });
}

JNIEXPORT void JNICALL Java_org_sstfilter_SstFilters_makeStrict(JNIEnv* env, jclass,
                                                                jlong config_options) {
  Guarded(env, [&] {
    const ROCKSDB_NAMESPACE::ConfigOptions strict = sstfilter::StrictConfigOptions();
    auto* config = reinterpret_cast<ROCKSDB_NAMESPACE::ConfigOptions*>(config_options);
    config->ignore_unknown_options = strict.ignore_unknown_options;
    config->ignore_unsupported_options = strict.ignore_unsupported_options;
    // Escaped input (RocksJava's default) lets a misspelt policy inside
    // block_based_table_factory={...} through as no filter, whatever the two flags above say.
    config->input_strings_escaped = strict.input_strings_escaped;
  });
}

}  // extern "C"
