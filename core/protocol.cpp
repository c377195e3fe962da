#include "core/protocol.h"

#include <fmt/format.h>

#include <msgpack.hpp>

namespace tune::core::protocol {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_json(Packer& pk, const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      pk.pack_nil();
      break;
    case Json::value_t::boolean:
      j.get<bool>() ? pk.pack_true() : pk.pack_false();
      break;
    case Json::value_t::number_integer:
      pk.pack(j.get<int64_t>());
      break;
    case Json::value_t::number_unsigned:
      pk.pack(j.get<uint64_t>());
      break;
    case Json::value_t::number_float:
      pk.pack(j.get<double>());
      break;
    case Json::value_t::string:
      pk.pack(j.get_ref<const std::string&>());
      break;
    case Json::value_t::array:
      pk.pack_array(static_cast<uint32_t>(j.size()));
      for (const auto& item : j) pack_json(pk, item);
      break;
    case Json::value_t::object:
      pk.pack_map(static_cast<uint32_t>(j.size()));
      for (const auto& [key, value] : j.items()) {
        pk.pack(key);
        pack_json(pk, value);
      }
      break;
    case Json::value_t::binary:
      throw ProtocolError("binary values cannot travel in control messages");
  }
}

Json to_json(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL:
      return nullptr;
    case msgpack::type::BOOLEAN:
      return o.via.boolean;
    case msgpack::type::POSITIVE_INTEGER:
      return o.via.u64;
    case msgpack::type::NEGATIVE_INTEGER:
      return o.via.i64;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return o.via.f64;
    case msgpack::type::STR:
      return std::string(o.via.str.ptr, o.via.str.size);
    case msgpack::type::ARRAY: {
      Json array = Json::array();
      for (uint32_t i = 0; i < o.via.array.size; ++i) array.push_back(to_json(o.via.array.ptr[i]));
      return array;
    }
    case msgpack::type::MAP: {
      Json object = Json::object();
      for (uint32_t i = 0; i < o.via.map.size; ++i) {
        const auto& kv = o.via.map.ptr[i];
        if (kv.key.type != msgpack::type::STR) throw ProtocolError("a map key is not a string");
        object[std::string(kv.key.via.str.ptr, kv.key.via.str.size)] = to_json(kv.val);
      }
      return object;
    }
    default:
      throw ProtocolError("binary or extension values are not allowed");
  }
}

// Writes the envelope and the fields of one message type.
class Writer {
 public:
  Writer(std::string_view type, uint32_t num_fields) : pk_(buffer_) {
    pk_.pack_map(num_fields + 2);
    field("v", kVersion);
    field("t", type);
  }
  template <class T>
  void field(std::string_view name, const T& value) {
    pk_.pack(name);
    if constexpr (std::is_same_v<T, Json>) {
      pack_json(pk_, value);
    } else {
      pk_.pack(value);
    }
  }
  std::string str() const { return std::string(buffer_.data(), buffer_.size()); }

 private:
  msgpack::sbuffer buffer_;
  Packer pk_;
};

// Reads typed fields out of a decoded map, naming the field on error.
class Reader {
 public:
  explicit Reader(const msgpack::object& map) : map_(map) {}

  const msgpack::object& at(std::string_view name) const {
    for (uint32_t i = 0; i < map_.via.map.size; ++i) {
      const auto& kv = map_.via.map.ptr[i];
      if (kv.key.type == msgpack::type::STR &&
          std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) == name) {
        return kv.val;
      }
    }
    throw ProtocolError(fmt::format("missing field '{}'", name));
  }
  template <class T>
  T get(std::string_view name) const {
    const msgpack::object& o = at(name);
    try {
      if constexpr (std::is_floating_point_v<T>) {
        if (o.type == msgpack::type::POSITIVE_INTEGER) return static_cast<T>(o.via.u64);
        if (o.type == msgpack::type::NEGATIVE_INTEGER) return static_cast<T>(o.via.i64);
      }
      return o.as<T>();
    } catch (const msgpack::type_error&) {
      throw ProtocolError(fmt::format("field '{}' has the wrong type", name));
    }
  }
  Json object(std::string_view name) const {
    const msgpack::object& o = at(name);
    if (o.type != msgpack::type::MAP) {
      throw ProtocolError(fmt::format("field '{}' is not a map", name));
    }
    return to_json(o);
  }

 private:
  const msgpack::object& map_;
};

Decision decision_of(const std::string& text) {
  if (auto d = decision_from_string(text)) return *d;
  throw ProtocolError(fmt::format("unknown decision '{}'", text));
}

std::map<std::string, ReduceOp> reduce_ops_of(const Json& table) {
  std::map<std::string, ReduceOp> ops;
  for (const auto& [metric, op] : table.items()) {
    auto value = op.is_string() ? reduce_op_from_string(op.get<std::string>()) : std::nullopt;
    if (!value) {
      throw ProtocolError(
          fmt::format("unknown reduce operation {} for metric '{}'; expected mean, sum, min or max",
                      op.dump(), metric));
    }
    ops[metric] = *value;
  }
  return ops;
}

struct Encoder {
  std::string operator()(const Hello& m) const {
    Writer w("hello", 6);
    w.field("trial_id", m.trial_id);
    w.field("rank", m.rank);
    w.field("attempt", m.attempt);
    w.field("pid", m.pid);
    w.field("host", m.host);
    w.field("step", m.step);
    return w.str();
  }
  std::string operator()(const Start& m) const {
    Writer w("start", 16);
    w.field("trainable", m.trainable);
    w.field("library", m.library);
    w.field("config", m.config);
    w.field("trial_dir", m.trial_dir);
    w.field("experiment", m.experiment);
    w.field("world_size", m.world_size);
    w.field("checkpoint", m.checkpoint);
    w.field("start_iteration", m.start_iteration);
    w.field("command", m.command);
    w.field("trial_id", m.trial_id);
    w.field("attempt", m.attempt);
    w.field("master_port", m.master_port);
    w.field("log_path", m.log_path);
    w.field("pipelined", m.pipelined);
    w.field("continue_through", m.continue_through);
    w.field("checkpoint_through", m.checkpoint_through);
    return w.str();
  }
  std::string operator()(const Report& m) const {
    Writer w("report", 6);
    w.field("iteration", m.iteration);
    w.field("metrics", m.metrics);
    w.field("time_this_iter_s", m.time_this_iter_s);
    w.field("time_total_s", m.time_total_s);
    w.field("checkpoint", m.checkpoint);
    Json reduce = Json::object();
    for (const auto& [metric, op] : m.reduce) reduce[metric] = to_string(op);
    w.field("reduce", reduce);
    return w.str();
  }
  std::string operator()(const DecisionMsg& m) const {
    Writer w("decision", 6);
    w.field("iteration", m.iteration);
    w.field("decision", to_string(m.decision));
    w.field("suspend", m.suspend);
    w.field("continue_through", m.continue_through);
    w.field("trial_id", m.trial_id);
    w.field("checkpoint_through", m.checkpoint_through);
    return w.str();
  }
  std::string operator()(const Done& m) const {
    Writer w("done", 2);
    w.field("iterations", m.iterations);
    w.field("suspended", m.suspended);
    return w.str();
  }
  std::string operator()(const ErrorMsg& m) const {
    Writer w("error", 2);
    w.field("message", m.message);
    w.field("where", m.where);
    return w.str();
  }
  std::string operator()(const Heartbeat& m) const {
    Writer w("heartbeat", 3);
    w.field("trial_id", m.trial_id);
    w.field("rank", m.rank);
    w.field("attempt", m.attempt);
    return w.str();
  }
};

Message decode_fields(const std::string& type, const Reader& r) {
  if (type == "hello") {
    return Hello{r.get<std::string>("trial_id"), r.get<int>("rank"),
                 r.get<int>("attempt"),          r.get<int64_t>("pid"),
                 r.get<std::string>("host"),     r.get<std::string>("step")};
  }
  if (type == "start") {
    return Start{r.get<std::string>("trainable"),
                 r.get<std::string>("library"),
                 r.object("config"),
                 r.get<std::string>("trial_dir"),
                 r.get<std::string>("experiment"),
                 r.get<int>("world_size"),
                 r.get<std::string>("checkpoint"),
                 r.get<int64_t>("start_iteration"),
                 r.get<std::vector<std::string>>("command"),
                 r.get<std::string>("trial_id"),
                 r.get<int>("attempt"),
                 r.get<int>("master_port"),
                 r.get<std::string>("log_path"),
                 r.get<bool>("pipelined"),
                 r.get<int64_t>("continue_through"),
                 r.get<int64_t>("checkpoint_through")};
  }
  if (type == "report") {
    return Report{r.get<int64_t>("iteration"),       r.object("metrics"),
                  r.get<double>("time_this_iter_s"), r.get<double>("time_total_s"),
                  r.get<bool>("checkpoint"),         reduce_ops_of(r.object("reduce"))};
  }
  if (type == "decision") {
    return DecisionMsg{r.get<int64_t>("iteration"),    decision_of(r.get<std::string>("decision")),
                       r.get<bool>("suspend"),         r.get<int64_t>("continue_through"),
                       r.get<std::string>("trial_id"), r.get<int64_t>("checkpoint_through")};
  }
  if (type == "done") return Done{r.get<int64_t>("iterations"), r.get<bool>("suspended")};
  if (type == "error") return ErrorMsg{r.get<std::string>("message"), r.get<std::string>("where")};
  if (type == "heartbeat") {
    return Heartbeat{r.get<std::string>("trial_id"), r.get<int>("rank"), r.get<int>("attempt")};
  }
  throw ProtocolError(fmt::format("unknown message type '{}'", type));
}

}  // namespace

std::string_view type_name(const Message& message) {
  static constexpr std::string_view kNames[] = {"hello", "start", "report",   "decision",
                                                "done",  "error", "heartbeat"};
  return kNames[message.index()];
}

std::string encode(const Message& message) { return std::visit(Encoder{}, message); }

Message decode(std::string_view bytes) {
  if (bytes.size() > kMaxMessageBytes) {
    throw ProtocolError(fmt::format("message of {} bytes exceeds the {} byte limit", bytes.size(),
                                    kMaxMessageBytes));
  }
  // Bound every container by the frame size, so a forged length cannot make
  // the parser allocate more than the bytes could describe.
  const auto n = static_cast<std::size_t>(bytes.size());
  msgpack::unpack_limit limit(n, n, n, n, n, 32);
  msgpack::object_handle handle;
  std::size_t offset = 0;
  try {
    handle = msgpack::unpack(bytes.data(), bytes.size(), offset, nullptr, nullptr, limit);
  } catch (const std::exception& e) {
    throw ProtocolError(fmt::format("not a msgpack message ({})", e.what()));
  }
  if (offset != bytes.size()) {
    throw ProtocolError(fmt::format("{} trailing bytes after the message", bytes.size() - offset));
  }
  const msgpack::object& root = handle.get();
  if (root.type != msgpack::type::MAP) throw ProtocolError("a message must be a msgpack map");
  Reader reader(root);
  const int version = reader.get<int>("v");
  if (version != kVersion) {
    throw ProtocolError(
        fmt::format("protocol version {} (this build speaks {})", version, kVersion));
  }
  return decode_fields(reader.get<std::string>("t"), reader);
}

}  // namespace tune::core::protocol
