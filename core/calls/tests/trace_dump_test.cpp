// The flight recorder's dump: two ranks' records written as sim's Chrome-trace schema and read
// back (slices, times from the first post, tracks, a call never completed, a failed one), the
// atomic write, an unwritable path and DIST_FLIGHT_RECORDER.
#include "core/calls/trace_dump.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dist/errors.hpp"

namespace {

using namespace dist;
using namespace dist::core;
namespace fs = std::filesystem;

CallRecord record(CallDesc call, std::uint64_t seq, CallState state, std::int64_t posted,
                  std::int64_t ended) {
  CallRecord r;
  r.call = call;
  r.seq = seq;
  r.group = "world";
  r.state = state;
  r.posted_us = posted;
  r.ended_us = ended;
  return r;
}

// Rank 0: a completed all_reduce, then a broadcast still posted. Rank 1: the same all_reduce,
// then a send that failed, ending last (t0 + 1,600 us).
std::vector<RankRecords> two_ranks() {
  const std::int64_t t0 = 1'700'000'000'000'000;
  const auto all_reduce = make_call(CallKind::all_reduce, DType::float32, 4);
  RankRecords r0{0,
                 {record(all_reduce, 1, CallState::completed, t0, t0 + 500),
                  record(make_call(CallKind::broadcast, DType::int32, 2, 0), 2, CallState::posted,
                         t0 + 1000, 0)}};
  RankRecords r1{1,
                 {record(all_reduce, 1, CallState::completed, t0 + 100, t0 + 500),
                  record(make_call(CallKind::send, DType::uint8, 8, 0), 0, CallState::failed,
                         t0 + 600, t0 + 1600)}};
  return {r1, r0};  // out of rank order: the tracks are still rank 0, rank 1
}

fs::path temp_dir() {
  const auto dir = fs::temp_directory_path() / ("dist_trace_dump_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TEST(TraceDump, WritesEachRanksCallsAsSimsSlicesFromTheFirstPost) {
  const auto dir = temp_dir();
  const auto path = dir / "dump.json";
  write_call_trace(path.string(), two_ranks());
  const auto json = read_json(path);
  EXPECT_EQ(json.at("displayTimeUnit"), "ns");
  std::map<std::pair<int, std::string>, nlohmann::json> slices;  // by (track, name)
  std::map<int, std::string> tracks;
  for (const auto& e : json.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      tracks[e.at("tid").get<int>()] = e.at("args").at("name");
    if (e.at("ph") != "X") continue;
    EXPECT_EQ(e.at("pid"), 0);
    std::set<std::string> args;
    for (const auto& [key, value] : e.at("args").items()) args.insert(key);
    EXPECT_EQ(args, (std::set<std::string>{"call", "group", "seq", "bytes", "outcome", "state"}));
    slices[{e.at("tid").get<int>(), e.at("name").get<std::string>()}] = e;
  }
  EXPECT_EQ(tracks, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
  ASSERT_EQ(slices.size(), 4u);

  const auto& first = slices.at({0, "all_reduce"});
  EXPECT_EQ(first.at("ts"), 0);
  EXPECT_EQ(first.at("dur"), 500);
  EXPECT_EQ(first.at("cat"), "collective");
  EXPECT_EQ(first.at("args").at("call"), "all_reduce(op=sum, float32 x 4)");
  EXPECT_EQ(first.at("args").at("group"), "world");
  EXPECT_EQ(first.at("args").at("seq"), 1);
  EXPECT_EQ(first.at("args").at("bytes"), 16);
  EXPECT_EQ(first.at("args").at("outcome"), "ok");
  EXPECT_EQ(first.at("args").at("state"), "completed");
  EXPECT_EQ(slices.at({1, "all_reduce"}).at("ts"), 100);
  EXPECT_EQ(slices.at({1, "all_reduce"}).at("dur"), 400);

  const auto& posted = slices.at({0, "broadcast"});  // lasts until the file's latest time
  EXPECT_EQ(posted.at("ts"), 1000);
  EXPECT_EQ(posted.at("dur"), 600);
  EXPECT_EQ(posted.at("args").at("state"), "posted");
  EXPECT_EQ(posted.at("args").at("outcome"), "never completed");

  const auto& failed = slices.at({1, "send"});
  EXPECT_EQ(failed.at("ts"), 600);
  EXPECT_EQ(failed.at("dur"), 1000);
  EXPECT_EQ(failed.at("cat"), "p2p");
  EXPECT_EQ(failed.at("args").at("state"), "failed");
  EXPECT_EQ(failed.at("args").at("outcome"), "failed");
  fs::remove_all(dir);
}

TEST(TraceDump, ReplacesAnExistingFileAndLeavesNoTemporaryFile) {
  const auto dir = temp_dir();
  const auto path = dir / "dump.json";
  std::ofstream(path) << "not json";
  write_call_trace(path.string(), two_ranks());
  EXPECT_NO_THROW(read_json(path));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"dump.json"});
  fs::remove_all(dir);
}

TEST(TraceDump, NoRecordsGivesTheTracksOnly) {
  const auto dir = temp_dir();
  const auto path = dir / "empty.json";
  write_call_trace(path.string(), {RankRecords{2, {}}});
  const auto events = read_json(path).at("traceEvents");
  ASSERT_EQ(events.size(), 2u);  // process_name, thread_name
  EXPECT_EQ(events[1].at("args").at("name"), "rank 2");
  fs::remove_all(dir);
}

TEST(TraceDump, AnUnwritablePathIsAnInvalidArgumentNamingItAndTheReason) {
  const std::string path = "/proc/nonexistent/x.json";
  try {
    write_call_trace(path, two_ranks());
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
}

TEST(TraceDump, ThePathIsDistFlightRecorder) {
  ::unsetenv("DIST_FLIGHT_RECORDER");
  EXPECT_EQ(call_trace_path(), "");
  ::setenv("DIST_FLIGHT_RECORDER", "/tmp/x.json", 1);
  EXPECT_EQ(call_trace_path(), "/tmp/x.json");
  ::unsetenv("DIST_FLIGHT_RECORDER");
}

}  // namespace
