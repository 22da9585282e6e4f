// TcpStoreServer's answers: the hello (secret, rank claims), set/get/add/check/missing/
// compare_set/delete_key/num_keys under the per-value, total and keys-per-request limits, and
// parked waits with their timeouts.
#include <algorithm>
#include <cstdint>

#include "core/store/tcp_store_session.hpp"
#include "dist/errors.hpp"

namespace dist::core {

using namespace tcp_store;
using tcp_store_detail::max_wait_ms;
using tcp_store_detail::Session;
using tcp_store_detail::Waiter;

namespace {
Bytes status_only(Status s) { return Writer().u8(static_cast<std::uint8_t>(s)).finish(); }
Bytes error_reply(const std::string& text) {
  return Writer().u8(static_cast<std::uint8_t>(Status::error)).str(text).finish();
}

// Compares in time that depends on the lengths only, not on where the secrets differ.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned diff = a.size() == b.size() ? 0U : 1U;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    diff |= static_cast<unsigned char>(i < a.size() ? a[i] : 0) ^
            static_cast<unsigned char>(i < b.size() ? b[i] : 0);
  return diff == 0;
}

bool writes(Command command) {
  return command == Command::set || command == Command::add || command == Command::compare_set ||
         command == Command::delete_key;
}

}  // namespace

std::vector<std::string> TcpStoreServer::Impl::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const auto& k : keys)
    if (!data.contains(k)) out.push_back(k);
  return out;
}

bool TcpStoreServer::Impl::all_set(const std::vector<std::string>& keys) const {
  return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data.contains(k); });
}

Bytes TcpStoreServer::Impl::handle_hello(const std::shared_ptr<Session>& session,
                                         const Bytes& payload) {
  Reader in(payload);
  session->closing = true;  // unless the hello is accepted
  if (static_cast<Command>(in.u8()) != Command::hello)
    return error_reply(
        "the connection's first request was not a hello (a client of another build?)");
  const auto rank = static_cast<std::int32_t>(in.u32());
  const bool first = in.u8() != 0;
  const std::string secret = in.str();
  const std::uint32_t their_world = in.at_end() ? 0 : in.u32();
  const std::uint32_t their_generation = in.at_end() ? 0 : in.u32();
  in.done();
  if (!same_secret(secret, options.secret))
    return error_reply(secret.empty()
                           ? "the store requires the job's secret and this client has "
                             "none (DIST_STORE_SECRET is unset in its environment)"
                           : "this client's secret (DIST_STORE_SECRET) is not the job's");
  if (their_generation > 0 && options.generation > 0 && their_generation != options.generation) {
    const std::string worlds = "this connection from " + session->peer + " is for world #" +
                               std::to_string(their_generation) + " of its process, the store " +
                               "serves world #" + std::to_string(options.generation) + " of rank 0";
    if (their_generation > options.generation)  // rank 0 has not yet closed this one
      return Writer()
          .u8(static_cast<std::uint8_t>(Status::later))
          .str(worlds + ", which is closing")
          .finish();
    return error_reply(worlds + " (did every process call init_dist as many times?)");
  }
  if (their_world > 0 && options.world_size > 0 &&
      their_world != static_cast<std::uint32_t>(options.world_size))
    return error_reply("this connection from " + session->peer + " was given WORLD_SIZE=" +
                       std::to_string(their_world) + ", but the store's host (rank 0) was given " +
                       std::to_string(options.world_size) +
                       " (is WORLD_SIZE the same for every process?)");
  if (rank >= 0 && options.world_size > 0 && rank >= options.world_size)
    return error_reply("this connection from " + session->peer + " claims rank " +
                       std::to_string(rank) + ", but the store serves a world of " +
                       std::to_string(options.world_size) +
                       " ranks (is WORLD_SIZE the same for every process?)");
  if (rank >= 0) {
    auto& slot = ranks[rank];
    const auto holder = slot.lock();
    if (first && holder && holder->open() && holder != session)
      return error_reply(
          "rank " + std::to_string(rank) + " is already connected from " + holder->peer +
          ", and this connection from " + session->peer + " claims rank " + std::to_string(rank) +
          " too (were two processes started with RANK=" + std::to_string(rank) + "?)");
    slot = session;
    session->rank = rank;
    claimed = ranks.size();
  }
  if (first) ++joined;
  session->closing = false;
  session->authenticated = true;
  return status_only(Status::ok);
}

std::string TcpStoreServer::Impl::put(const std::string& key, Bytes value) {
  if (value.size() > options.max_value)
    return "a value of " + std::to_string(value.size()) + " bytes for key '" + key +
           "' exceeds the store's limit of " + std::to_string(options.max_value) +
           " bytes per value (TcpStoreOptions::max_value)";
  const auto it = data.find(key);
  const std::size_t old = it == data.end() ? 0 : key.size() + it->second.size();
  const std::size_t after = total - old + key.size() + value.size();
  if (after > options.max_total)
    return "setting key '" + key + "' would take the store to " + std::to_string(after) +
           " bytes, over its quota of " + std::to_string(options.max_total) +
           " bytes (TcpStoreOptions::max_total)";
  total = after;
  data[key] = std::move(value);
  return {};
}

Bytes TcpStoreServer::Impl::handle_set(Reader& in) {
  std::string key = in.str();
  Bytes value = in.bytes();
  in.done();
  if (auto refusal = put(key, std::move(value)); !refusal.empty())
    return error_reply("TcpStore: " + refusal);
  notify_waiters();
  return status_only(Status::ok);
}

Bytes TcpStoreServer::Impl::handle_add(Reader& in) {
  const std::string key = in.str();
  const auto delta = static_cast<std::int64_t>(in.u64());
  in.done();
  const auto it = data.find(key);
  std::int64_t value = 0;
  try {
    value = store_detail::added_counter("TcpStore", key, it == data.end() ? nullptr : &it->second,
                                        delta);
  } catch (const Error& e) {
    return error_reply(e.what());
  }
  if (auto refusal = put(key, store_detail::format_counter(value)); !refusal.empty())
    return error_reply("TcpStore: " + refusal);
  notify_waiters();
  return Writer()
      .u8(static_cast<std::uint8_t>(Status::ok))
      .u64(static_cast<std::uint64_t>(value))
      .finish();
}

Bytes TcpStoreServer::Impl::handle_compare_set(Reader& in) {
  const std::string key = in.str();
  const Bytes expected = in.bytes();
  Bytes desired = in.bytes();
  in.done();
  const auto it = data.find(key);
  auto outcome = store_detail::compare_set_outcome(it == data.end() ? nullptr : &it->second,
                                                   expected, desired);
  if (outcome.store) {
    if (auto refusal = put(key, std::move(desired)); !refusal.empty())
      return error_reply("TcpStore: " + refusal);
    notify_waiters();
  }
  return Writer()
      .u8(static_cast<std::uint8_t>(Status::ok))
      .bytes(outcome.value)
      .finish(options.max_message);
}

Bytes TcpStoreServer::Impl::handle_delete_key(Reader& in) {
  const std::string key = in.str();
  in.done();
  const auto it = data.find(key);
  const bool found = it != data.end();
  if (found) {
    total -= key.size() + it->second.size();
    data.erase(it);
  }
  return Writer().u8(static_cast<std::uint8_t>(Status::ok)).u8(found ? 1 : 0).finish();
}

Bytes TcpStoreServer::Impl::handle(const std::shared_ptr<Session>& session, const Bytes& payload) {
  Reader in(payload);
  const auto command = static_cast<Command>(in.u8());
  try {
    return handle(session, command, in);
  } catch (const TooManyKeys& e) {  // refused before decoding: the connection stays in step
    const char* name = command == Command::wait       ? "wait"
                       : command == Command::check    ? "check"
                       : command == Command::contacts ? "contacts"
                                                      : "missing";
    return error_reply("TcpStore: a " + std::string(name) + " request of " +
                       std::to_string(e.count) + " keys exceeds the store's limit of " +
                       std::to_string(e.limit) + " keys per request (TcpStoreOptions::max_keys)");
  }
}

Bytes TcpStoreServer::Impl::handle(const std::shared_ptr<Session>& session, Command command,
                                   Reader& in) {
  if (writes(command) && session->rank < 0 && !options.members_only_prefix.empty()) {
    Reader peek = in;  // the key leads every write
    const std::string key = peek.str();
    if (key.rfind(options.members_only_prefix, 0) == 0)
      return error_reply("TcpStore: only the job's ranks may write '" +
                         options.members_only_prefix + "' keys, and this connection from " +
                         session->peer + " claimed no rank (key '" + key + "')");
  }
  switch (command) {
    case Command::set: return handle_set(in);
    case Command::get: {
      const std::string key = in.str();
      in.done();
      const auto it = data.find(key);
      if (it == data.end()) return status_only(Status::missing);
      return Writer()
          .u8(static_cast<std::uint8_t>(Status::ok))
          .bytes(it->second)
          .finish(options.max_message);
    }
    case Command::add: return handle_add(in);
    case Command::check: {
      const auto keys = in.strings(options.max_keys);
      in.done();
      return Writer().u8(static_cast<std::uint8_t>(Status::ok)).u8(all_set(keys) ? 1 : 0).finish();
    }
    case Command::missing: {
      const auto keys = in.strings(options.max_keys);
      in.done();
      return Writer()
          .u8(static_cast<std::uint8_t>(Status::ok))
          .strings(missing(keys))
          .finish(options.max_message);
    }
    case Command::wait: return handle_wait(session, in);
    case Command::compare_set: return handle_compare_set(in);
    case Command::delete_key: return handle_delete_key(in);
    case Command::num_keys:
      in.done();
      return Writer()
          .u8(static_cast<std::uint8_t>(Status::ok))
          .u64(static_cast<std::uint64_t>(data.size()))
          .finish();
    case Command::contacts: return handle_contacts(in);
    case Command::hello: break;
  }
  throw ProtocolError("unknown command");
}

Bytes TcpStoreServer::Impl::handle_wait(const std::shared_ptr<Session>& session, Reader& in) {
  const std::uint64_t timeout_ms = std::min(in.u64(), max_wait_ms);
  auto keys = in.strings(options.max_keys);
  in.done();
  if (all_set(keys)) return status_only(Status::ok);
  auto waiter = std::make_shared<Waiter>(io, session, std::move(keys));
  waiters.push_back(waiter);
  waiter->timer.expires_after(std::chrono::milliseconds(timeout_ms));
  waiter->timer.async_wait([this, w = std::weak_ptr<Waiter>(waiter)](std::error_code ec) {
    if (ec) return;
    if (auto locked = w.lock()) finish_waiter(locked, true);
  });
  return {};
}

Bytes TcpStoreServer::Impl::handle_contacts(Reader& in) {
  const std::uint32_t count = in.u32();
  if (count > options.max_keys) throw TooManyKeys(count, options.max_keys);
  Writer out;
  out.u8(static_cast<std::uint8_t>(Status::ok)).u32(count);
  const auto now = std::chrono::steady_clock::now();
  const auto ms = [&](std::chrono::steady_clock::time_point then) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - then).count());
  };
  using State = Store::RankContact::State;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto rank = static_cast<int>(in.u32());
    const auto open = ranks.find(rank);
    const auto holder = open == ranks.end() ? nullptr : open->second.lock();
    if (holder && holder->open())
      out.u8(static_cast<std::uint8_t>(holder->parked() ? State::waiting : State::open))
          .u64(ms(holder->last_heard()));
    else if (const auto gone = left.find(rank); gone != left.end())
      out.u8(static_cast<std::uint8_t>(State::closed)).u64(ms(gone->second));
    else out.u8(static_cast<std::uint8_t>(State::unknown)).u64(0);
  }
  in.done();
  return out.finish(options.max_message);
}

void TcpStoreServer::Impl::finish_waiter(const std::shared_ptr<Waiter>& waiter, bool timed_out) {
  if (waiter->done) return;
  waiter->done = true;
  waiter->timer.cancel();
  if (timed_out)
    waiter->session->respond(Writer()
                                 .u8(static_cast<std::uint8_t>(Status::timeout))
                                 .strings(missing(waiter->keys))
                                 .finish(options.max_message));
  else waiter->session->respond(status_only(Status::ok));
  waiters.remove(waiter);
}

void TcpStoreServer::Impl::forget(const Session* session, int rank) {
  if (const auto it = ranks.find(rank); it != ranks.end()) {
    const auto holder = it->second.lock();
    if (!holder || holder.get() == session) {
      ranks.erase(it);
      // Kept for ranks of the world only: a stranger claiming ever new numbers grows nothing.
      if (rank < options.world_size) left[rank] = std::chrono::steady_clock::now();
    }
  }
  claimed = ranks.size();
  for (auto it = waiters.begin(); it != waiters.end();) {
    if ((*it)->session.get() != session) {
      ++it;
      continue;
    }
    (*it)->done = true;
    (*it)->timer.cancel();
    it = waiters.erase(it);
  }
}

void TcpStoreServer::Impl::notify_waiters() {
  std::vector<std::shared_ptr<Waiter>> ready;
  for (const auto& w : waiters)
    if (all_set(w->keys)) ready.push_back(w);
  for (const auto& w : ready) finish_waiter(w, false);
}

}  // namespace dist::core
