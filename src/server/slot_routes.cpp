// llama-server's saved slots. A slot's prompt cache (its KV rows and the prompt keys of their
// positions) is saved to, restored from or erased in files under --slot-save-path, so a long
// fixed system prompt is prefilled once and reused across restarts and replicas.
#include <charconv>
#include <string>

#include "server/api_error.h"
#include "server/routes.h"

namespace tandem::server {
namespace {

// The value of `key` in an undecoded query string ("" when absent).
std::string QueryValue(const std::string& query, const std::string& key) {
  size_t pos = 0;
  while (pos <= query.size()) {
    const size_t end = std::min(query.find('&', pos), query.size());
    const std::string part = query.substr(pos, end - pos);
    const size_t eq = part.find('=');
    if (part.substr(0, eq) == key) return eq == std::string::npos ? "" : part.substr(eq + 1);
    pos = end + 1;
  }
  return "";
}

int SlotIdOfPath(const std::string& path) {
  const std::string id = path.substr(std::string("/slots/").size());
  int value = -1;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size() || value < 0) {
    throw HttpError(400,
                    "id_slot in the path must be a slot number, got '" + id.substr(0, 32) + "'");
  }
  return value;
}

void CheckIdle(const SlotActionResult& result, int slot) {
  if (result.busy) {
    throw HttpError(409, "slot " + std::to_string(slot) +
                             " is processing a request; save, restore and erase need it idle");
  }
}

}  // namespace

void CheckSlotFileName(const std::string& name, const std::string& field) {
  const bool chars_ok = std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
  if (name.empty() || name.size() > 200 || !chars_ok || name[0] == '.' ||
      name.find("..") != std::string::npos) {
    Fail(ErrorKind::kInvalidArgument,
         "'" + field +
             "' must be a plain file name in the slot save directory: 1 to 200 of "
             "A-Z a-z 0-9 . _ -, not starting with '.' and without '..'");
  }
}

HttpResponse HandleSlots(const RouteContext& context, const HttpRequest& http) {
  (void)http;
  Json slots = Json::array();
  for (const SlotInfo& s : context.backend->Slots()) {
    slots.push_back({{"id", s.id},
                     {"n_ctx", s.n_ctx},
                     {"is_processing", s.is_processing},
                     {"id_task", s.is_processing ? Json(s.request_id) : Json(-1)},
                     {"n_cached", s.n_cached}});
  }
  return JsonResponse(200, slots);
}

HttpResponse HandleSlotAction(const RouteContext& context, const HttpRequest& http) {
  const int slot = SlotIdOfPath(http.path);
  const std::string action = QueryValue(http.query, "action");
  if (action == "erase") {
    // Erase reads no body: one, if sent, must hold no field.
    if (http.body.find_first_not_of(" \t\r\n") != std::string::npos) {
      RejectUnknownFields(ParseJsonObject(http.body), {}, "");
    }
    const SlotActionResult r = context.backend->EraseSlot(slot);
    CheckIdle(r, slot);
    return JsonResponse(200, {{"id_slot", slot}, {"n_erased", r.n_tokens}});
  }
  if (action != "save" && action != "restore") {
    throw HttpError(400, "query parameter 'action' must be save, restore or erase");
  }
  if (context.slot_save_path.empty()) {
    throw HttpError(501, "slot " + action + " needs the server started with --slot-save-path");
  }
  const Json body = ParseJsonObject(http.body);
  RejectUnknownFields(body, {"filename"}, "");
  const std::string filename = RequiredString(body, "filename");
  CheckSlotFileName(filename, "filename");
  const std::string path = context.slot_save_path + "/" + filename;
  if (action == "save") {
    const SlotActionResult r = context.backend->SaveSlot(slot, path);
    CheckIdle(r, slot);
    return JsonResponse(200, {{"id_slot", slot},
                              {"filename", filename},
                              {"n_saved", r.n_tokens},
                              {"n_written", r.n_bytes},
                              {"timings", {{"save_ms", r.ms}}}});
  }
  const SlotActionResult r = context.backend->RestoreSlot(slot, path);
  CheckIdle(r, slot);
  return JsonResponse(200, {{"id_slot", slot},
                            {"filename", filename},
                            {"n_restored", r.n_tokens},
                            {"n_read", r.n_bytes},
                            {"timings", {{"restore_ms", r.ms}}}});
}

}  // namespace tandem::server
