// Package atomicfile writes files that appear under their name only when
// they are complete: the bytes go to a temporary file in the target's
// directory, which is flushed to disk and renamed over the target at the
// end, and removed on any error. A reader, another rank on a shared file
// system or a rerun of a crashed job sees the old file or the whole new
// one, never a partial one.
//
// Files get the mode os.Create would give them (0666 less the umask; 0644
// under the usual umask 022), so other users and service accounts on a
// cluster's shared file system can read what a job wrote. Errors read
// "atomicfile: <target>: <cause>" and wrap the cause. The package imports
// nothing of gnnrun, so every package may use it.
package atomicfile
