// Reads a declared workload (fio, fs_mark, create_unlink), checks that it fits the device
// and the bound on expanded ops, and expands it into files, set-up ops and tasks.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/filesystem.hpp"
#include "model/info.hpp"
#include "model/registry.hpp"
#include "sim/prng.hpp"

namespace loader {
namespace {

/// The most operations a workload may expand into (fio: jobs times each job's create, prefill,
/// writes and fsyncs; fs_mark: threads times files times create, write, fsync), all sweep points
/// together. An expanded op costs about 170 bytes and a microsecond to load: 3000000 is half a
/// gigabyte and a few seconds, and a small file can no longer ask for gigabytes.
/// fs_mark's own bound (1000000 files of 3 ops) stays within it.
constexpr std::uint64_t workload_ops_max = 3'000'000;
/// The most files an fs_mark job creates, all threads together (and as many for its earlier run).
constexpr std::uint64_t fs_mark_files_max = 1'000'000;

}  // namespace

// The seeds "btrfs: stop sleeping for one jiffy in non-ssd mounts during log commit" and
// "btrfs: do not set the full sync flag on the inode during page release" give fio
// jobs; the loader expands one into files and tasks, so the rest of crashsim sees ordinary ops.
void Loader::read_workload(const Json& value) {
    check_keys(value, "$.workload", {"fio", "fs_mark", "create_unlink"}, {});
    if (value.empty()) fail("$.workload", "one of the keys fio, fs_mark, create_unlink", "an empty object");
    if (value.size() > 1) {
        fail("$.workload", "exactly one of the keys fio, fs_mark, create_unlink",
             value.size() == 2 ? "two" : std::to_string(value.size()) + " keys");
    }
    const bool fs_mark_given = value.contains("fs_mark");
    if (value.contains("create_unlink")) {
        const CreateUnlinkJob job = read_create_unlink(value.at("create_unlink"));
        generate_create_unlink(job);
        scenario_.create_unlink = job;
        return;
    }
    if (fs_mark_given) {
        const FsMarkJob fs_mark = read_fs_mark(value.at("fs_mark"));
        // Before expanding: the device holds the data, and the ops are within the bound.
        check_device_holds({fs_mark.threads, fs_mark.files, fs_mark.size}, "$.workload.fs_mark");
        take_workload_ops(std::uint64_t{fs_mark.threads} * (fs_mark.files * (fs_mark.fsync ? 3 : 2) +
                                                            fs_mark.previous_files * (fs_mark.fsync ? 4 : 3)),
                          "$.workload.fs_mark");
        expand_fs_mark(fs_mark);
        scenario_.fs_mark = fs_mark;
        return;
    }
    const FioJob fio = read_fio(value.at("fio"));
    // Before expanding: a workload too big for the device is refused before it costs memory.
    const std::uint64_t filled = fio.prefill == "write" || fio.prefill == "falloc" ? fio.size : 0;
    check_device_holds({fio.jobs, fio.io_size + filled}, "$.workload.fio");
    const std::uint64_t writes = fio.io_size / fio.bs;
    const std::uint64_t fsync_every = fio.o_dsync ? 1 : fio.fsync;
    const std::uint64_t prefill_ops = fio.prefill == "none" ? 0 : fio.prefill == "write" ? 2 : 1;
    // jobs <= 256 and writes <= 1000000: no overflow.
    take_workload_ops(fio.jobs * (1 + prefill_ops + writes + (fsync_every == 0 ? 0 : writes / fsync_every)),
                      "$.workload.fio");
    expand_fio(fio);
    scenario_.fio = fio;
}

auto Loader::read_fio(const Json& job) const -> FioJob {
    const std::string path = "$.workload.fio";
    check_keys(job, path,
               {"jobs", "rw", "bs", "size", "io_size", "fsync", "direct", "o_dsync", "seed", "prefill"},
               {"jobs", "rw", "bs", "size"});
    FioJob fio;
    fio.jobs = static_cast<std::uint32_t>(read_unsigned_in(job.at("jobs"), path + ".jobs", 1, 256));
    fio.random = read_choice(job.at("rw"), path + ".rw", {"write", "randwrite"}, "") == "randwrite";
    fio.bs = read_multiple(job.at("bs"), path + ".bs");
    if (fio.bs == 0)
        fail(path + ".bs", "a positive multiple of " + std::to_string(scenario_.device.block_size), "0");
    auto multiple_of_bs = [&](const char* key) {
        const std::uint64_t bytes = scale_ == 1 ? read_size(job.at(key), path + "." + key)
                                                : read_scaled(job.at(key), path + "." + key);
        if (bytes == 0) fail(path + "." + key, "an unsigned integer greater than 0", "0");
        if (bytes % fio.bs != 0)
            fail(path + "." + key, "a multiple of bs (" + std::to_string(fio.bs) + ")",
                 std::to_string(bytes));
        return bytes;
    };
    fio.size = multiple_of_bs("size");
    fio.io_size = job.contains("io_size") ? multiple_of_bs("io_size") : fio.size;
    if (fio.io_size / fio.bs > 1'000'000)
        fail(path + ".io_size", "at most 1000000 writes per job", std::to_string(fio.io_size / fio.bs));
    if (fio.size > (std::uint64_t{1} << 40))
        fail(path + ".size", "at most 2^40 bytes", std::to_string(fio.size));
    if (job.contains("fsync")) fio.fsync = read_unsigned_in(job.at("fsync"), path + ".fsync", 0, 1'000'000);
    read_fio_options(job, fio);
    return fio;
}

// direct, o_dsync, seed and prefill, then the model's operations the job expands into.
void Loader::read_fio_options(const Json& job, FioJob& fio) const {
    const std::string path = "$.workload.fio";
    if (job.contains("direct")) {
        if (!job.at("direct").is_boolean()) fail(path + ".direct", "a boolean", type_name(job.at("direct")));
        fio.direct = job.at("direct").get<bool>();
        const model::OpInfo* write = model::op_with_effect(*model_, model::OracleEffect::write_data);
        const bool has_flag = write != nullptr &&
                              std::any_of(write->fields.begin(), write->fields.end(),
                                          [](const auto& field) { return field.name == "direct"; });
        if (fio.direct && !has_flag)
            fail(path + ".direct", "a model whose write takes the direct flag", "true");
    }
    if (job.contains("o_dsync")) {
        if (!job.at("o_dsync").is_boolean())
            fail(path + ".o_dsync", "a boolean", type_name(job.at("o_dsync")));
        fio.o_dsync = job.at("o_dsync").get<bool>();
    }
    if (job.contains("seed")) fio.seed = read_unsigned(job.at("seed"), path + ".seed");
    if (job.contains("prefill")) {
        // The file as the job finds it: sparse but sized (the model's operation that sets the
        // size), preallocated (the one that extends it), or written and fsynced.
        fio.prefill =
            read_choice(job.at("prefill"), path + ".prefill", {"none", "truncate", "falloc", "write"}, "");
        if (fio.prefill != "none" && prefill_op(fio.prefill) == nullptr) {
            fail(path + ".prefill", "a prefill the model has an operation for", json_quoted(fio.prefill));
        }
    }
    check_workload_roles(path);
}

void Loader::check_workload_roles(const std::string& path) const {
    for (const auto& [role, op] :
         {std::pair{"create", op_create()}, {"write", op_write()}, {"fsync", op_fsync()}}) {
        if (op == nullptr)
            fail(path, std::string("a model with a ") + role + " operation", json_quoted(scenario_.model));
    }
}

void Loader::expand_fio(const FioJob& fio) {
    const std::string path = "$.workload.fio";
    // Expand: file jobN created in the set-up, task jobN writes bs at a time
    // (sequentially, or at offsets drawn from the job's own stream) and
    // fsyncs every `fsync` writes (every write with O_DSYNC).
    const std::uint64_t writes = fio.io_size / fio.bs;
    const std::uint64_t slots = fio.size / fio.bs;
    const std::uint64_t fsync_every = fio.o_dsync ? 1 : fio.fsync;
    for (std::uint32_t index = 0; index < fio.jobs; index++) {
        const std::string file = "job" + std::to_string(index);
        if (!files_created_.insert(file).second)
            fail(path, "job files job0..jobN-1 not created elsewhere", json_quoted(file));
        files_setup_.insert(file);
        scenario_.files.push_back(file);
        auto expanded = [&file](const model::OpInfo* info, const std::string& json_path) {
            Op op;
            op.name = info->name;
            op.file = file;
            op.json_path = json_path;
            return op;
        };
        scenario_.setup.push_back(expanded(op_create(), path));
        if (fio.prefill != "none") {
            const model::OpInfo* prefill = prefill_op(fio.prefill);
            Op fill = expanded(prefill, path + ".prefill");
            fill.length = fio.size;
            // A size-setting op (truncate) takes a size only.
            fill.has_offset = std::any_of(prefill->fields.begin(), prefill->fields.end(),
                                          [](const auto& field) { return field.name == "offset"; });
            fill.has_length = true;
            scenario_.setup.push_back(fill);
            if (fio.prefill == "write") scenario_.setup.push_back(expanded(op_fsync(), path + ".prefill"));
        }
        Task task{file, {}, std::nullopt};
        sim::Prng offsets(sim::hash_name(file) ^ fio.seed);
        for (std::uint64_t write = 0; write < writes; write++) {
            if (write % 4096 == 0) poll_stop(path_);
            Op op = expanded(op_write(), path);
            op.offset = (fio.random ? offsets.below(slots) : write % slots) * fio.bs;
            op.length = fio.bs;
            op.has_offset = op.has_length = true;
            if (fio.direct) op.flags["direct"] = true;
            task.ops.push_back(op);
            if (fsync_every != 0 && (write + 1) % fsync_every == 0)
                task.ops.push_back(expanded(op_fsync(), path));
        }
        scenario_.tasks.push_back(std::move(task));
    }
}

// A copy-on-write model allocates new blocks for every write, overwrites included; each model
// declares the blocks its metadata area leaves for data (model/registry.hpp). A workload that
// cannot fit is bad input, not a run that ends in ENOSPC.
void Loader::check_device_holds(std::initializer_list<std::uint64_t> factors,
                                const std::string& json_path) const {
    // The product of the factors (bytes), saturating instead of wrapping.
    std::uint64_t bytes = 1;
    for (std::uint64_t factor : factors) {
        if (__builtin_mul_overflow(bytes, factor, &bytes)) bytes = ~std::uint64_t{0};
    }
    const std::uint64_t blocks_needed =
        bytes / scenario_.device.block_size + (bytes % scenario_.device.block_size != 0);
    model::Geometry geometry{};
    geometry.block_size = scenario_.device.block_size;
    geometry.blocks = scenario_.device.blocks;
    geometry.profile = scenario_.device.profile;
    const std::uint64_t data_blocks = model::data_blocks(scenario_.model, geometry);
    if (blocks_needed > data_blocks) {
        fail(json_path,
             "a workload whose data fits in the device's data area (" + std::to_string(data_blocks) +
                 " blocks)",
             std::to_string(blocks_needed) + " blocks of data");
    }
}

void Loader::take_workload_ops(std::uint64_t ops, const std::string& json_path) {
    if (ops > workload_ops_max - workload_ops_used_) {
        fail(json_path,
             "a workload of at most " + std::to_string(workload_ops_max) +
                 " operations once expanded (all sweep points together)",
             std::to_string(workload_ops_used_ + ops) + " operations");
    }
    workload_ops_used_ += ops;
}

// "jbd2: fix checkpoint cleanup performance regression" measures
// `fs_mark -d scratch -s 1024 -n 10000 -t 1 -D 100 -N 100`. Each thread
// creates its files one after another while it is measured, writes each whole and fsyncs it
// before close. A file's name ("d3/t0.f17": directory 3, thread 0, its file 17) says where
// fs_mark puts it; a model with a mkdir operation makes the directories (fs_mark_run), the
// others only take the name. previous_files: an earlier run of the same command ran right
// before and unlinked its files ("d3/p0.f17") after its loop (the set-up).
auto Loader::read_fs_mark(const Json& job) const -> FsMarkJob {
    const std::string path = "$.workload.fs_mark";
    check_keys(
        job, path,
        {"files", "size", "threads", "dirs", "files_per_dir", "fsync", "user_cpu_us", "previous_files"},
        {"files", "size"});
    check_workload_roles(path);
    FsMarkJob fs_mark;
    fs_mark.files = read_unsigned_in(job.at("files"), path + ".files", 1, fs_mark_files_max);
    // fs_mark -s: bytes on a byte-granular model (ext4), else a block multiple.
    fs_mark.size = model_->byte_granular ? read_size(job.at("size"), path + ".size")
                                         : read_multiple(job.at("size"), path + ".size");
    if (fs_mark.size == 0) {
        fail(path + ".size",
             model_->byte_granular ? std::string("a positive size in bytes")
                                   : "a positive multiple of " + std::to_string(scenario_.device.block_size),
             "0");
    }
    if (fs_mark.size > (std::uint64_t{1} << 40))
        fail(path + ".size", "at most 2^40 bytes", std::to_string(fs_mark.size));
    if (job.contains("threads")) {
        fs_mark.threads =
            static_cast<std::uint32_t>(read_unsigned_in(job.at("threads"), path + ".threads", 1, 256));
    }
    if (fs_mark.files * fs_mark.threads > fs_mark_files_max) {
        fail(path + ".files", "files * threads <= " + std::to_string(fs_mark_files_max),
             std::to_string(fs_mark.files) + " * " + std::to_string(fs_mark.threads));
    }
    if (job.contains("dirs"))
        fs_mark.dirs = read_unsigned_in(job.at("dirs"), path + ".dirs", 1, fs_mark_files_max);
    if (job.contains("files_per_dir")) {
        fs_mark.files_per_dir =
            read_unsigned_in(job.at("files_per_dir"), path + ".files_per_dir", 1, fs_mark_files_max);
    }
    if (job.contains("fsync")) fs_mark.fsync = read_bool(job.at("fsync"), path + ".fsync");
    if (job.contains("user_cpu_us")) {
        fs_mark.user_cpu_ns = read_user_cpu_ns(job.at("user_cpu_us"), path + ".user_cpu_us");
    }
    read_previous_files(job, fs_mark);
    return fs_mark;
}

void Loader::read_previous_files(const Json& job, FsMarkJob& fs_mark) const {
    const std::string path = "$.workload.fs_mark";
    if (job.contains("previous_files")) {
        fs_mark.previous_files =
            read_unsigned_in(job.at("previous_files"), path + ".previous_files", 0, fs_mark_files_max);
        if (fs_mark.previous_files > 0 &&
            model::op_with_effect(*model_, model::OracleEffect::remove_file) == nullptr) {
            fail(path + ".previous_files",
                 "0 on a model with no unlink operation (the earlier run unlinks its files)",
                 std::to_string(fs_mark.previous_files));
        }
        if (fs_mark.previous_files * fs_mark.threads > fs_mark_files_max) {
            fail(path + ".previous_files", "previous_files * threads <= " + std::to_string(fs_mark_files_max),
                 std::to_string(fs_mark.previous_files) + " * " + std::to_string(fs_mark.threads));
        }
    }
}

void Loader::expand_fs_mark(const FsMarkJob& fs_mark) {
    // The earlier run (fs_mark without -k unlinks its files after its timed
    // loop, untimed) is the set-up: it leaves the directories and, in a
    // transaction not yet committed, every buffer its unlinks dirtied.
    std::set<std::uint64_t> made;  // directories made by mkdir
    if (fs_mark.previous_files > 0) {
        old_directories(fs_mark, made);
        std::vector<Op> unlinks;
        for (std::uint32_t thread = 0; thread < fs_mark.threads; thread++) {
            std::vector<Op> ops = fs_mark_run(fs_mark, thread, fs_mark.previous_files, "p", made);
            scenario_.setup.insert(scenario_.setup.end(), ops.begin(), ops.end());
            for (const Op& op : ops) {
                if (op.name != op_create()->name) continue;
                Op unlink = op;
                unlink.name = model::op_with_effect(*model_, model::OracleEffect::remove_file)->name;
                unlinks.push_back(std::move(unlink));
            }
        }
        scenario_.setup.insert(scenario_.setup.end(), unlinks.begin(), unlinks.end());
    }
    for (std::uint32_t thread = 0; thread < fs_mark.threads; thread++) {
        Task task{"thread" + std::to_string(thread), {}, std::nullopt};
        task.ops = fs_mark_run(fs_mark, thread, fs_mark.files, "t", made);
        scenario_.tasks.push_back(std::move(task));
    }
}

// With an earlier run: the directories are older still (fs_mark keeps them
// from run to run; they were made by the runs that came first and written
// home since): `mkdir dD` for each, then `sync` (what 30 s of background
// writeback would have done).
void Loader::old_directories(const FsMarkJob& fs_mark, std::set<std::uint64_t>& made) {
    const std::string path = "$.workload.fs_mark";
    const model::OpInfo* mkdir = model::op_making_directory(*model_);
    if (mkdir == nullptr) return;
    const model::OpInfo* sync = model::find_op(*model_, "sync");
    if (sync == nullptr)
        fail(path + ".previous_files", "0 on a model with no sync operation", "a positive count");
    const std::uint64_t files = std::max(fs_mark.files, fs_mark.previous_files);
    for (std::uint64_t index = 0; index < files; index++) {
        const std::uint64_t dir =
            (fs_mark.files_per_dir == 0 ? index : index / fs_mark.files_per_dir) % fs_mark.dirs;
        if (!made.insert(dir).second) continue;
        const std::string dir_name = "d" + std::to_string(dir);
        if (!files_created_.insert(dir_name).second) {
            fail(path, "directory names dD not created elsewhere", json_quoted(dir_name));
        }
        scenario_.files.push_back(dir_name);
        Op op;
        op.name = mkdir->name;
        op.file = dir_name;
        op.json_path = path;
        scenario_.setup.push_back(std::move(op));
    }
    Op op;
    op.name = sync->name;
    op.json_path = path;
    scenario_.setup.push_back(std::move(op));
}

// One fs_mark run of one thread: file i goes to directory i % dirs, or, with
// files_per_dir N, to directory (i / N) % dirs (setup_file_name's round robin;
// fs_mark starts at directory tv_sec % dirs, the model at 0). A model with
// directories gets `mkdir dD` before the first file of D: fs_mark calls mkdir
// before every file and ignores EEXIST, and the later calls find the name in
// the VFS lookup without reaching the file system, so the model leaves them
// out. Then create (with fs_mark's own CPU time), write, fsync.
auto Loader::fs_mark_run(const FsMarkJob& fs_mark, std::uint32_t thread, std::uint64_t files,
                         const std::string& prefix, std::set<std::uint64_t>& made) -> std::vector<Op> {
    const std::string path = "$.workload.fs_mark";
    const model::OpInfo* mkdir = model::op_making_directory(*model_);
    const auto expanded = [&path](const std::string& name, const std::string& file) {
        Op op;
        op.name = name;
        op.file = file;
        op.json_path = path;
        return op;
    };
    std::vector<Op> ops;
    for (std::uint64_t index = 0; index < files; index++) {
        if (index % 4096 == 0) poll_stop(path_);
        const std::uint64_t dir =
            (fs_mark.files_per_dir == 0 ? index : index / fs_mark.files_per_dir) % fs_mark.dirs;
        const std::string dir_name = "d" + std::to_string(dir);
        if (mkdir != nullptr && made.insert(dir).second) {
            if (!files_created_.insert(dir_name).second) {
                fail(path, "directory names dD not created elsewhere", json_quoted(dir_name));
            }
            scenario_.files.push_back(dir_name);
            ops.push_back(expanded(mkdir->name, dir_name));
        }
        const std::string file =
            dir_name + "/" + prefix + std::to_string(thread) + ".f" + std::to_string(index);
        if (!files_created_.insert(file).second) {
            fail(path, "file names dD/" + prefix + "T.fI not created elsewhere", json_quoted(file));
        }
        scenario_.files.push_back(file);
        Op create = expanded(op_create()->name, file);
        create.user_cpu_ns = fs_mark.user_cpu_ns;
        ops.push_back(std::move(create));
        Op write = expanded(op_write()->name, file);
        write.length = fs_mark.size;
        write.has_offset = write.has_length = true;
        ops.push_back(std::move(write));
        if (fs_mark.fsync) ops.push_back(expanded(op_fsync()->name, file));
    }
    return ops;
}

// "xfs: remove the m_active_trans counter": concurrent create of 50 million
// empty inodes, then their concurrent removal, by 16 threads. Generated as the
// tasks run, so a large count costs only the file names.
auto Loader::read_create_unlink(const Json& job) const -> CreateUnlinkJob {
    const std::string path = "$.workload.create_unlink";
    check_keys(job, path, {"threads", "files", "unlink", "user_cpu_us"}, {"threads", "files"});
    if (op_create() == nullptr) fail(path, "a model with a create operation", json_quoted(scenario_.model));
    if (model::op_with_effect(*model_, model::OracleEffect::remove_file) == nullptr) {
        fail(path, "a model with an unlink operation", json_quoted(scenario_.model));
    }
    constexpr std::uint64_t files_max = 4'000'000;
    CreateUnlinkJob result;
    result.threads =
        static_cast<std::uint32_t>(read_unsigned_in(job.at("threads"), path + ".threads", 1, 256));
    result.files = read_unsigned_in(job.at("files"), path + ".files", 1, files_max);
    if (result.files * result.threads > files_max) {
        fail(path + ".files", "files * threads <= " + std::to_string(files_max),
             std::to_string(result.files) + " * " + std::to_string(result.threads));
    }
    if (job.contains("unlink")) result.unlink = read_bool(job.at("unlink"), path + ".unlink");
    if (job.contains("user_cpu_us")) {
        result.user_cpu_ns = read_user_cpu_ns(job.at("user_cpu_us"), path + ".user_cpu_us");
    }
    return result;
}

void Loader::generate_create_unlink(const CreateUnlinkJob& job) {
    const std::string path = "$.workload.create_unlink";
    for (std::uint32_t thread = 0; thread < job.threads; thread++) {
        Task task{"thread" + std::to_string(thread), {}, std::nullopt};
        GeneratedOps ops;
        ops.first_file = static_cast<std::uint32_t>(scenario_.files.size());
        ops.files = job.files;
        ops.unlink = job.unlink;
        ops.phase_tasks = job.threads;
        ops.user_cpu_ns = job.user_cpu_ns;
        ops.create_op = op_create()->name;
        ops.unlink_op = model::op_with_effect(*model_, model::OracleEffect::remove_file)->name;
        ops.json_path = path;
        // Only the names: the operations are made as the task runs.
        for (std::uint64_t index = 0; index < job.files; index++) {
            if (index % 4096 == 0) poll_stop(path_);
            std::string file = "t" + std::to_string(thread) + ".f" + std::to_string(index);
            if (!files_created_.insert(file).second)
                fail(path, "file names tT.fI not created elsewhere", json_quoted(file));
            scenario_.files.push_back(std::move(file));
        }
        task.generated = std::move(ops);
        scenario_.tasks.push_back(std::move(task));
    }
}

/// A workload's `user_cpu_us` (fs_mark, create_unlink): the user CPU time
/// each file costs, in microseconds, at most a second.
auto Loader::read_user_cpu_ns(const Json& value, const std::string& json_path) const -> std::uint64_t {
    const double us = read_number(value, json_path);
    if (us > 1e6) fail(json_path, "at most 1000000 (a second per file)", number_text(value));
    return static_cast<std::uint64_t>(us * 1000.0 + 0.5);
}

}  // namespace loader
