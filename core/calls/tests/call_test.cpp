// The call description and the flight recorder as functions: describe, the differing field, the
// DesyncError text, the ring, the records' bytes (corrupt ones refused), the absent ranks' words.
#include "core/calls/call.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/calls/diagnosis.hpp"
#include "core/calls/flight_recorder.hpp"
#include "dist/errors.hpp"
#include "testing/processes.hpp"

namespace {

using namespace dist;
using namespace dist::core;

TEST(CallDesc, DescribesEachKindAsSimDoes) {
  EXPECT_EQ(describe(make_call(CallKind::all_reduce, DType::float32, 8, -1, ReduceOp::max)),
            "all_reduce(op=max, float32 x 8)");
  EXPECT_EQ(describe(make_call(CallKind::broadcast, DType::int32, 4, 1)),
            "broadcast(src=1, int32 x 4)");
  EXPECT_EQ(describe(make_call(CallKind::send, DType::uint8, 2, 3, ReduceOp::sum, 7)),
            "send(dst=3, tag=7, uint8 x 2)");
  EXPECT_EQ(describe(make_call(CallKind::barrier)), "barrier()");
  const std::vector<int> ranks{0, 2};
  EXPECT_EQ(describe(make_call(CallKind::split), ranks), "new_group(ranks={0,2})");
  const std::vector<std::size_t> counts{1, 2};
  EXPECT_EQ(describe(make_call(CallKind::all_gather_v, DType::float64, 3), {}, counts),
            "all_gather_v(counts={1,2}, float64 x 3)");
}

TEST(CallDesc, NamesTheFirstFieldThatDiffers) {
  const CallDesc sum = make_call(CallKind::all_reduce, DType::float32, 8);
  CallDesc other = sum;
  EXPECT_EQ(differing_field(sum, other), "");
  other.op = ReduceOp::max;
  EXPECT_EQ(differing_field(sum, other), "op");
  other.count = 9;
  EXPECT_EQ(differing_field(sum, other), "count");
  EXPECT_EQ(differing_field(sum, make_call(CallKind::barrier)), "kind");
  EXPECT_EQ(differing_field(make_call(CallKind::reduce, DType::int8, 1, 0),
                            make_call(CallKind::reduce, DType::int8, 1, 1)),
            "dst");
  // A send and its recv agree when dtype and count do.
  EXPECT_EQ(differing_field(make_call(CallKind::send, DType::int8, 4, 1),
                            make_call(CallKind::recv, DType::int8, 4, 0)),
            "");
  CallDesc a = make_call(CallKind::all_gather_v, DType::int8, 3), b = a;
  const std::vector<std::uint64_t> one{1, 2}, two{2, 1};
  a.lists_hash = hash_list(one);
  b.lists_hash = hash_list(two);
  EXPECT_EQ(differing_field(a, b), "counts");
}

TEST(CallDesc, DesyncMessageListsEveryRanksCall) {
  EXPECT_EQ(
      desync_message("world", 3, "op",
                     {{0, "all_reduce(op=sum, int32 x 1)"}, {1, "all_reduce(op=max, int32 x 1)"}}),
      "collective on world #3: ranks disagree on 'op':\n"
      "  rank 0 called all_reduce(op=sum, int32 x 1)\n"
      "  rank 1 called all_reduce(op=max, int32 x 1)");
  EXPECT_EQ(desync_message(group_name(std::vector<int>{0, 2}), 0, "count", {}),
            "send/recv on group {0, 2}: the two sides disagree on 'count':");
}

// 0..n-1 calling `call`, except the last rank, which calls `last`.
std::vector<RankCall> all_but_last_agree(int n, const std::string& call, const std::string& last) {
  std::vector<RankCall> calls;
  for (int r = 0; r < n; ++r) calls.push_back({r, r == n - 1 ? last : call});
  return calls;
}

TEST(CallDesc, DesyncMessageOfSixteenRanksListsEachRank) {
  const std::string msg =
      desync_message("world", 1, "kind", all_but_last_agree(16, "barrier()", "all_reduce()"));
  EXPECT_NE(msg.find("\n  rank 0 called barrier()\n  rank 1 called barrier()\n"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("\n  rank 15 called all_reduce()"), std::string::npos) << msg;
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 16);
}

TEST(CallDesc, DesyncMessageOfManyRanksGroupsTheSameCall) {
  EXPECT_EQ(desync_message("world", 2, "kind",
                           all_but_last_agree(17, "barrier()", "all_reduce(op=sum, int32 x 1)")),
            "collective on world #2: ranks disagree on 'kind':\n"
            "  ranks 0-15 called barrier()\n"
            "  rank 16 called all_reduce(op=sum, int32 x 1)");
  EXPECT_EQ(desync_message("world", 3, "kind",
                           all_but_last_agree(65536, "all_reduce(op=sum, float32 x 1)",
                                              "broadcast(src=0, float32 x 1)")),
            "collective on world #3: ranks disagree on 'kind':\n"
            "  ranks 0-65534 called all_reduce(op=sum, float32 x 1)\n"
            "  rank 65535 called broadcast(src=0, float32 x 1)");
  // The groups come in the order of their first rank; a rank's own call keeps its line.
  std::vector<RankCall> calls = all_but_last_agree(40, "barrier()", "barrier()");
  calls[3].call = "all_reduce()";
  calls[17].call = "broadcast()";
  calls[30].call = "all_reduce()";
  EXPECT_EQ(call_lines(calls),
            "\n  ranks 0-39 except 3, 17, 30 called barrier()"
            "\n  ranks 3, 30 called all_reduce()"
            "\n  rank 17 called broadcast()");
}

TEST(FlightRecorder, KeepsTheLastCallsInARing) {
  FlightRecorder r(4);
  const auto world = r.add_group("world", "w");
  std::vector<std::uint64_t> tickets;
  for (std::uint64_t seq = 1; seq <= 6; ++seq)
    tickets.push_back(r.post(world, seq, make_call(CallKind::barrier)));
  r.end(tickets[5], CallState::completed);
  r.end(tickets[0], CallState::failed);  // overwritten long ago: nothing happens
  const auto last = r.last(10);
  ASSERT_EQ(last.size(), 4u);
  EXPECT_EQ(last.front().seq, 3u);
  EXPECT_EQ(last.back().seq, 6u);
  EXPECT_EQ(last.back().state, CallState::completed);
  EXPECT_GE(last.back().ended_us, last.back().posted_us);
  EXPECT_EQ(last[2].state, CallState::posted);
  EXPECT_EQ(describe(last.back()), "barrier() on world #6");
  r.retire_numbers(world, "w'");
  EXPECT_EQ(r.last(1).front().seq, 0u);
  EXPECT_EQ(r.last(1).front().group_key, "w'");
  EXPECT_EQ(FlightRecorder(3).capacity(), 4u);  // a power of two
  FlightRecorder off(0);
  off.post(off.add_group("world", "w"), 1, make_call(CallKind::barrier));
  EXPECT_TRUE(off.last(10).empty());
}

TEST(FlightRecorder, CapacityComesFromTheEnvironment) {
  {
    test_support::ScopedEnv env("DIST_FLIGHT_RECORDER_ENTRIES", "16");
    EXPECT_EQ(FlightRecorder::default_capacity(), 16u);
  }
  {
    test_support::ScopedEnv env("DIST_FLIGHT_RECORDER_ENTRIES", "lots");
    EXPECT_THROW(FlightRecorder::default_capacity(), InvalidArgument);
  }
  test_support::ScopedEnv env("DIST_FLIGHT_RECORDER_ENTRIES", std::nullopt);
  EXPECT_EQ(FlightRecorder::default_capacity(), 1024u);
}

TEST(FlightRecorder, RecordsRoundTripAndCorruptBytesAreRefused) {
  const std::vector<CallRecord> records{{make_call(CallKind::all_reduce, DType::float32, 4), 2,
                                         "world", CallState::completed, 10, 20, 7, "w"},
                                        {make_call(CallKind::recv, DType::int64, 1, 3), 0,
                                         "group {0, 3}", CallState::posted, 30, 0, 0, "w.1"}};
  const Bytes bytes = encode_records(records);
  const auto back = decode_records(bytes);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(describe(back[0]), "all_reduce(op=sum, float32 x 4) on world #2");
  EXPECT_EQ(back[1].group, "group {0, 3}");
  EXPECT_EQ(back[1].group_key, "w.1");
  EXPECT_EQ(back[0].chain, 7u);
  EXPECT_EQ(back[1].posted_us, 30);
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, bytes.size() - 1}) {
    const Bytes short_bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(decode_records(short_bytes), InvalidArgument) << cut;
  }
  Bytes longer = bytes;
  longer.push_back('x');
  EXPECT_THROW(decode_records(longer), InvalidArgument);
  Bytes bad_kind = bytes;
  bad_kind[4] = 99;  // the first record's kind
  EXPECT_THROW(decode_records(bad_kind), InvalidArgument);
}

// Every kind survives the round trip: a kind the decoder's bound left out would read as corrupt.
TEST(FlightRecorder, EveryCallKindRoundTrips) {
  for (int k = 0; k < call_kind_count; ++k) {
    const auto kind = static_cast<CallKind>(k);
    const std::vector<CallRecord> records{
        {make_call(kind, DType::int32, 1), 1, "world", CallState::completed, 1, 2, 0, "w"}};
    std::vector<CallRecord> back;
    ASSERT_NO_THROW(back = decode_records(encode_records(records))) << to_string(kind);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].call.kind, kind);
  }
  EXPECT_EQ(to_string(static_cast<CallKind>(call_kind_count - 1)), "new_subgroups");
}

TEST(Diagnosis, DescribesAnAbsentRankFromWhatItPublished) {
  const std::int64_t now = 10'000'000;
  EXPECT_EQ(describe_absent({3}, {}, "w", now), "rank 3 never arrived (it has published no call)");
  const CallRecord done{
      make_call(CallKind::barrier), 4, "world", CallState::completed, 0, now - 12'300'000, 0, "w"};
  EXPECT_EQ(describe_absent({3}, {done}, "w", now),
            "rank 3 completed call #4 (barrier()) 12.3 s ago and has not called since");
  EXPECT_EQ(describe_absent({4, 5, 6}, {done}, "w", now),
            "ranks 4-6 completed call #4 (barrier()) 12.3 s ago and have not called since");
  const CallRecord elsewhere{make_call(CallKind::all_reduce, DType::int32, 1),
                             1,
                             "group {0, 1}",
                             CallState::posted,
                             now - 500'000,
                             0,
                             0,
                             "w.1"};
  EXPECT_EQ(describe_absent({1}, {done, elsewhere}, "w", now),
            "rank 1 is in all_reduce(op=sum, int32 x 1) on group {0, 1} #1 since 0.5 s");
  // Failing in call #5, rank 3 may have skipped it (#4 is the last it published); failing in #8,
  // calls #5-#7 needed it: what it published is stale, and said to be (issue 38, defect 4).
  EXPECT_EQ(describe_absent({3}, {done}, "w", now, 5),
            "rank 3 completed call #4 (barrier()) 12.3 s ago and has not called since");
  EXPECT_EQ(describe_absent({2, 3}, {done}, "w", now, 8),
            "ranks 2, 3 were last heard of in call #4 (barrier()), 12.3 s ago (calls up to #7 "
            "completed with them since: their status stopped reaching the store)");
  const CallRecord waiting{
      make_call(CallKind::barrier), 6, "world", CallState::posted, now - 2'000'000, 0, 0, "w"};
  EXPECT_EQ(describe_absent({3}, {waiting}, "w", now, 6),
            "rank 3 is in call #6 (barrier()) since 2.0 s");
  EXPECT_EQ(describe_absent({3}, {waiting}, "w", now, 7),
            "rank 3 was last heard of in call #6 (barrier()), 2.0 s ago (calls up to #6 completed "
            "with it since: its status stopped reaching the store)");
}

}  // namespace
