#include "envs/maze/mujoco_model.h"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include <mujoco/mujoco.h>
#include <spdlog/spdlog.h>

namespace ringrl::envs::maze {
namespace {

constexpr int kErrorBufferSize = 1024;

std::atomic<std::int64_t> g_warnings{0};
std::mutex g_message_mu;
std::string g_last_message;  // GUARDED_BY(g_message_mu)

void remember(const char* msg) {
  std::lock_guard<std::mutex> lock(g_message_mu);
  g_last_message = msg ? msg : "";
}

void on_mujoco_warning(const char* msg) {
  g_warnings.fetch_add(1, std::memory_order_relaxed);  // a counter only; no data published
  remember(msg);
  spdlog::warn("mujoco warning: {}", msg ? msg : "");
}

// MuJoCo documents that its error function does not return to the caller: we throw.
[[noreturn]] void on_mujoco_error(const char* msg) {
  remember(msg);
  spdlog::error("mujoco error: {}", msg ? msg : "");
  throw MujocoError(std::string("mujoco error: ") + (msg ? msg : ""));
}

// Owner of the (large, ~2 MB in 2.2.2) VFS struct and of the files it holds.
struct VfsDeleter {
  void operator()(mjVFS* vfs) const noexcept {
    mj_deleteVFS(vfs);
    delete vfs;
  }
};
using VfsPtr = std::unique_ptr<mjVFS, VfsDeleter>;

}  // namespace

void ModelDeleter::operator()(mjModel* m) const noexcept { mj_deleteModel(m); }
void DataDeleter::operator()(mjData* d) const noexcept { mj_deleteData(d); }

void install_mujoco_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    mju_user_warning = on_mujoco_warning;
    mju_user_error = on_mujoco_error;
  });
}

ModelPtr compile_mjcf(const std::string& xml, const std::string& file_name) {
  install_mujoco_handlers();
  // Put the text into an in-memory file, then compile it by name.
  VfsPtr vfs(new mjVFS);
  mj_defaultVFS(vfs.get());
  if (mj_makeEmptyFileVFS(vfs.get(), file_name.c_str(), static_cast<int>(xml.size())) != 0)
    throw MujocoError("cannot create in-memory MJCF file " + file_name);
  const int index = mj_findFileVFS(vfs.get(), file_name.c_str());
  if (index < 0) throw MujocoError("in-memory MJCF file " + file_name + " not found");
  std::memcpy(vfs->filedata[index], xml.data(), xml.size());
  char error[kErrorBufferSize] = "";
  mjModel* m = mj_loadXML(file_name.c_str(), vfs.get(), error, sizeof(error));
  if (!m) throw MujocoError("cannot compile " + file_name + ": " + error);
  if (error[0] != '\0') {
    // A compiled model with a message is a compiler warning: report and count it.
    on_mujoco_warning(error);
  }
  return ModelPtr(m);
}

SharedModel shared_model(const std::string& key, const std::function<std::string()>& make_xml) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<const mjModel>> cache;  // GUARDED_BY(mu)
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<const mjModel>& slot = cache[key];
  if (SharedModel m = slot.lock()) return m;
  ModelPtr fresh = compile_mjcf(make_xml(), key + ".xml");
  SharedModel shared(fresh.release(), [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  slot = shared;
  return shared;
}

DataPtr make_data(const mjModel& m) {
  mjData* d = mj_makeData(&m);
  if (!d) throw MujocoError("mj_makeData failed");
  return DataPtr(d);
}

std::int64_t mujoco_warning_count() noexcept { return g_warnings.load(std::memory_order_relaxed); }

std::string last_mujoco_message() {
  std::lock_guard<std::mutex> lock(g_message_mu);
  return g_last_message;
}

int data_warnings(const mjData& d) noexcept {
  int total = 0;
  for (int i = 0; i < mjNWARNING; ++i) total += d.warning[i].number;
  return total;
}

}  // namespace ringrl::envs::maze
