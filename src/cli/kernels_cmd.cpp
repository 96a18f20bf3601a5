// SPDX-License-Identifier: Apache-2.0
#include "kernels_cmd.hpp"

#include <iostream>
#include <string>
#include <vector>

#include "tandem/errors.hpp"
#include "tandem/kernels/catalog.hpp"

namespace tandem::cli {

namespace {

namespace k = tandem::kernels;
using json = nlohmann::ordered_json;

// A scalar whose C type is the element type of each entry prints as "T".
bool scalar_follows_dtype(k::Model m, const std::string& name, std::size_t index) {
  const std::vector<DType> dtypes = k::kernel_dtypes(m, name);
  for (DType t : dtypes) {
    const k::KernelEntry* e = k::find(m, name, t);
    if (!e || e->params[index].scalar_dtype != t) return false;
  }
  return !dtypes.empty();
}

json param_json(const k::ParamSpec& p, bool element_typed) {
  json j{{"name", p.name}, {"kind", p.kind == k::ArgKind::view ? "view" : "scalar"}};
  if (p.kind == k::ArgKind::view) {
    j["access"] = std::string(access_mode_name(p.mode));
    if (p.fixed_dtype) j["dtype"] = std::string(dtype_name(*p.fixed_dtype));
    if (p.rank) j["rank"] = p.rank;
  } else {
    j["type"] = element_typed ? std::string("T") : std::string(dtype_name(p.scalar_dtype));
    if (p.default_value) j["default"] = *p.default_value;
  }
  return j;
}

}  // namespace

json kernels_json() {
  json out = json::array();
  for (k::Model m : {k::Model::simt, k::Model::tile}) {
    for (const std::string& name : k::kernel_names(m)) {
      json params = json::array();
      const auto specs = k::kernel_params(m, name);
      for (std::size_t i = 0; i < specs.size(); ++i) {
        params.push_back(
            param_json(specs[i], specs[i].kind == k::ArgKind::scalar && scalar_follows_dtype(m, name, i)));
      }
      json dtypes = json::array();
      json tiles = json::array();
      for (DType t : k::kernel_dtypes(m, name)) {
        dtypes.push_back(std::string(dtype_name(t)));
        if (m == k::Model::tile && tiles.empty()) {
          for (const k::TileShape& s : k::kernel_tiles(m, name, t)) tiles.push_back(k::to_string(s));
        }
      }
      if (dtypes.empty()) dtypes.push_back("any");
      json entry{
          {"model", std::string(k::model_name(m))}, {"kernel", name}, {"params", params}, {"dtypes", dtypes}};
      if (m == k::Model::tile) entry["tiles"] = tiles;
      entry["effect"] = k::kernel_effect(m, name);
      out.push_back(entry);
    }
  }
  return out;
}

void print_kernels(const json& kernels) {
  for (const json& e : kernels) {
    std::string sig;
    for (const json& p : e["params"]) {
      if (!sig.empty()) sig += ", ";
      sig += p["name"].get<std::string>() + ":" +
             (p["kind"] == "view" ? p["access"].get<std::string>() : p["type"].get<std::string>());
    }
    std::string dtypes;
    for (const json& d : e["dtypes"]) dtypes += (dtypes.empty() ? "" : " ") + d.get<std::string>();
    std::cout << e["model"].get<std::string>() << "  " << e["kernel"].get<std::string>() << "(" << sig
              << ")\n"
              << "      dtypes: " << dtypes;
    if (e.contains("tiles")) {
      std::string tiles;
      for (const json& t : e["tiles"]) tiles += (tiles.empty() ? "" : " ") + t.get<std::string>();
      std::cout << "   tiles: " << tiles;
    }
    std::cout << "\n      " << e["effect"].get<std::string>() << "\n";
  }
}

}  // namespace tandem::cli
