# A stand-in, for tools/windows/test-windows.sh, for what R's Windows make gives src/Makevars.win
# (R CMD INSTALL runs make -f Makevars.win -f .../Makeconf -f .../winshlib.mk SHLIB=... in src/):
# SHLIB, OBJECTS, CC, a rule for objects and one for the package DLL, linked against R.dll.
# Here CC is Debian's mingw gcc, R's headers are Linux R's (the API is the same) and R.dll is a
# stub that the script makes with the symbols the objects use: enough to build and load the DLL,
# not to run R code. Set by the caller on make's command line, as R sets SHLIB and OBJECTS there
# (Makevars.win, read first, uses both in its rules): SHLIB, OBJECTS, R_INCLUDE (R's headers) and
# RSTUB (the folder of the stub's import library libR.dll.a).
CC = x86_64-w64-mingw32-gcc
CFLAGS = -O2 -Wall -std=gnu11
SHLIB_LD = $(CC)

%.o: %.c
	$(CC) -I"$(R_INCLUDE)" -DNDEBUG $(PKG_CPPFLAGS) $(CFLAGS) -c $< -o $@

# As R does without a tabscreen-win.def: the global symbols of the prerequisites are exported.
$(SHLIB): $(OBJECTS)
	echo EXPORTS > tmp.def
	x86_64-w64-mingw32-nm $^ | sed -n 's/^.* [BCDRT] / /p' >> tmp.def
	$(SHLIB_LD) -shared -s -static-libgcc -o $@ tmp.def $(OBJECTS) $(PKG_LIBS) -L"$(RSTUB)" -lR
	rm -f tmp.def
