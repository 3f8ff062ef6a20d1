package audit

// Queued returns how many closes wait for Run to take them.
func Queued(l *Log) int { return len(l.closes) }
