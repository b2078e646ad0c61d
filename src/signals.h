#ifndef TABSCREEN_SIGNALS_H
#define TABSCREEN_SIGNALS_H
/* See signals.c. Every call into Go is bracketed by ts_enter_go() and ts_leave_go(); a running
 * screening holds one level from TsRunStart until its result is taken. On Windows, which has no
 * POSIX signals to guard against, all three do nothing. */
void ts_protect_signal_handlers(void);
void ts_enter_go(void);
void ts_leave_go(void);
#endif
