// SPDX-License-Identifier: Apache-2.0
// ops/ops.hpp — the functions of the op table's rows, by family: read_*
// checks what the shared field readers cannot, exec_* runs the op.
#pragma once

#include "../op_table.hpp"

namespace tandem::scenario::detail {

// ops/views.cpp: allocations, views of them and conversions.
void exec_alloc(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_foreign(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_slice(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_peel(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_atomic(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_tensor_view(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_as_buffer(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_split(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_to_tensor(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_into_buffer(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_reinterpret(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_drop(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_forget(Engine& e, const CompiledStep& s, ThreadState& t);

// ops/transfer.cpp: copies between views and the host.
void exec_copy(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_upload(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_download(Engine& e, const CompiledStep& s, ThreadState& t);

// ops/launch.cpp: catalog launches, and declared ones (the kernel with no body).
void read_launch(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void exec_launch(Engine& e, const CompiledStep& s, ThreadState& t);
void read_declared_launch(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void exec_declared_launch(Engine& e, const CompiledStep& s, ThreadState& t);

// ops/graph.cpp
void read_replay(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void exec_capture(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_replay(Engine& e, const CompiledStep& s, ThreadState& t);

// ops/sync.cpp: waiting, time and devices.
void read_wait(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void read_peer_access(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void exec_wait(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_retire(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_loop(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_sleep(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_peer_access(Engine& e, const CompiledStep& s, ThreadState& t);

// ops/check.cpp: checks and free memory.
void read_check(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void read_vram(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void exec_check(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_vram(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_note(Engine& e, const CompiledStep& s, ThreadState& t);

// ops/interop.cpp: driver objects made outside the runtime and borrowed by it.
void read_borrow_stream(Reader& r, const nlohmann::json& j, const std::string& p, Step& s);
void exec_borrow_stream(Engine& e, const CompiledStep& s, ThreadState& t);
void exec_borrow_context(Engine& e, const CompiledStep& s, ThreadState& t);

}  // namespace tandem::scenario::detail
