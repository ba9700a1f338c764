#pragma once
// A minimal JSON object writer (one line, members in the order they were added), for the
// reports of the command-line programs.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

namespace sdot::detail {

/// `text` as a JSON string literal (quoted, escaped).
inline std::string json_string(std::string const& text) {
  std::string out = "\"";
  for (char const c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

/// `value` as a JSON number that reads back to the same double; null when not finite
/// (JSON has no NaN or infinity).
inline std::string json_number(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

/// A JSON object written on one line, its members in the order they were added.
class JsonObject {
public:
  JsonObject& add(std::string const& key, double value) { return member(key, json_number(value)); }
  template <class Integer,
            std::enable_if_t<
                std::is_integral<Integer>::value && !std::is_same<Integer, bool>::value, int> = 0>
  JsonObject& add(std::string const& key, Integer value) {
    return member(key, std::to_string(value));
  }
  JsonObject& add(std::string const& key, bool value) {
    return member(key, value ? "true" : "false");
  }
  JsonObject& add(std::string const& key, std::string const& value) {
    return member(key, json_string(value));
  }
  JsonObject& add(std::string const& key, char const* value) {
    return member(key, json_string(value));
  }
  JsonObject& add(std::string const& key, JsonObject const& value) {
    return member(key, value.str());
  }
  /// A member whose value is null.
  JsonObject& add_null(std::string const& key) { return member(key, "null"); }
  /// Every member of `other`, after those of this object.
  JsonObject& append(JsonObject const& other) {
    if (!other.body_.empty())
      body_ += (body_.empty() ? "" : ",") + other.body_;
    return *this;
  }

  /// The object, e.g. {"n":10,"seconds":{"total":0.5}}.
  std::string str() const { return "{" + body_ + "}"; }

private:
  JsonObject& member(std::string const& key, std::string const& value) {
    body_ += (body_.empty() ? "" : ",") + json_string(key) + ":" + value;
    return *this;
  }
  std::string body_;
};

} // namespace sdot::detail
