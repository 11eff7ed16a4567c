// Where an output may not go, found before any work: the atomic writers (io.hpp) call these for every
// target (check_output_path, write_files_atomic) so that a run refuses at the start, not after minutes
// of measuring, and root never writes through a link another user planted in a shared folder.
#pragma once

#include <string>

namespace mhacfg {

// Follows `path` component by component as the kernel would and refuses (InputError naming `field`
// and `path`) the first symbolic link that Linux's fs.protected_symlinks rule would not follow
// (Documentation/admin-guide/sysctl/fs.rst): a link in a sticky world-writable folder is followed
// only when this process's user owns it or the folder's owner owns it. mhacfg applies the rule
// itself, whatever the sysctl says. A component that does not exist (a new file) or cannot be read
// ends the walk: the writer reports it.
void check_followed_links(const std::string& path, const std::string& field);

// True when the existing file `path` (links resolved) is a mount point, as a bind-mounted file is
// (`docker run -v FILE:FILE`): rename() cannot replace it (EBUSY). Seen by a device number that differs
// from its folder's, or by its listing as a mount point in /proc/self/mountinfo (a bind mount from the
// same file system keeps the device number).
bool is_mount_point(const std::string& path);

}  // namespace mhacfg
