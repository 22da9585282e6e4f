// The data forms of the conformance suite: their names, which are checked at a count, and shapes.
#include "testing/conformance/forms.hpp"

namespace conformance {

const char* to_string(Form f) {
  switch (f) {
    case Form::vector: return "vector";
    case Form::span: return "span";
    case Form::tensor: return "tensor";
    case Form::device: return "device tensor";
  }
  return "?";
}

std::vector<Form> forms_at(std::size_t count, std::size_t k) {
  std::vector<Form> all{Form::vector, Form::span, Form::tensor};
  if (world_runner().device_form) all.push_back(Form::device);
  if (count < 1000) return all;
  return {all[k % all.size()]};
}

std::vector<std::int64_t> shape_for(std::size_t count) {
  if (count == 0) return {2, 0};
  if (count == 7) return {7, 1};
  return {static_cast<std::int64_t>(count)};
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace conformance
