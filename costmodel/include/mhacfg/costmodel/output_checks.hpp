// Where an output may not go, found before any work: the atomic writers (io.hpp) call these for every
// target (check_output_path, write_files_atomic) so that a run refuses at the start, not after minutes
// of measuring.
#pragma once

#include <string>

namespace mhacfg {

// True when the existing file `path` (links resolved) is a mount point, as a bind-mounted file is
// (`docker run -v FILE:FILE`): rename() cannot replace it (EBUSY). Seen by a device number that differs
// from its folder's, or by its listing as a mount point in /proc/self/mountinfo (a bind mount from the
// same file system keeps the device number).
bool is_mount_point(const std::string& path);

}  // namespace mhacfg
