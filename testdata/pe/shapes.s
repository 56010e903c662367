# The fixture of shapes of line and inline records that a compiler seldom writes but a
# reader must take as they are: written by hand, in the form clang gives its own output
# (clang -S -gcodeview), and linked by lld-link into shapes.exe and shapes.pdb. Each
# shape is what one rule of the reader is there for:
#
#   outer        its first line record says line 0 (no line, where the procedure starts);
#                `twice` is inlined into it with three ranges of its own annotations: one
#                at line 5, one at line 0, and one that runs past the procedure's end
#                (taken by no address). A procedure nested in it (`nested`, whose record
#                lies between outer's and outer's end) holds an inline site of its own,
#                whose ranges are not outer's.
#   second       a procedure without line records: the lines before it, outer's, are
#                not its lines.
#   main_entry   calls both, with lines of its own.
#
# twice's function ID names an empty string as its scope.

# A procedure's record: of kind S_GPROC32_ID (4423) or S_LPROC32_ID (4422), for the code
# from `name` to `end`, of function ID `id`. Its parent, end and next are left 0: lld-link
# fills them in.
.macro procedure kind, name, end, id
	.short	.Lrecord_\name\()_end-.Lrecord_\name   # Record length
.Lrecord_\name:
	.short	\kind                           # Record kind
	.long	0                               # PtrParent
	.long	0                               # PtrEnd
	.long	0                               # PtrNext
	.long	\end-\name                      # Code size
	.long	0                               # Offset after prologue
	.long	0                               # Offset before epilogue
	.long	\id                             # Function type index
	.secrel32	\name                      # Function section relative address
	.secidx	\name                          # Function section index
	.byte	0                               # Flags
	.asciz	"\name"                         # Function name
	.p2align	2, 0x0
.Lrecord_\name\()_end:
.endm

# The record that ends a procedure: S_PROC_ID_END.
.macro end_procedure
	.short	2                               # Record length
	.short	4431                            # Record kind
.endm

	.text
	.def	@feat.00;
	.scl	3;
	.type	0;
	.endef
	.globl	@feat.00
.set @feat.00, 0

	.globl	outer
	.p2align	4, 0x90
outer:                                  # offset: bytes, what the records say
.Lfunc_begin0:
	.cv_func_id 0
	.cv_file	1 ".\\shapes.s"
	.cv_loc	0 1 0 0                         # +0: line 0
	movl	%ecx, %eax                      # +0: 2
	.cv_loc	0 1 11 0
	addl	%eax, %eax                      # +2: 2, twice at line 5
	addl	%eax, %eax                      # +4: 2, twice at line 0
	xorl	$0x55, %eax                     # +6: 3
	.cv_loc	0 1 12 0
	imull	$7, %eax, %eax                  # +9: 3, the nested procedure's site
	retq                                    # +12: 1, twice's range past the end
.Lfunc_end0:

	.globl	second
	.p2align	4, 0x90
second:
.Lfunc_begin1:
	leal	1(%rcx,%rcx), %eax
	retq
.Lfunc_end1:

	.p2align	4, 0x90
nested:
.Lfunc_begin3:
	retq
.Lfunc_end3:

	.globl	main_entry
	.p2align	4, 0x90
main_entry:
.Lfunc_begin2:
	.cv_func_id 2
	.cv_loc	2 1 21 0
	pushq	%rsi
	subq	$32, %rsp
	.cv_loc	2 1 22 0
	movl	$3, %ecx
	callq	outer
	movl	%eax, %esi
	movl	$4, %ecx
	callq	second
	addl	%esi, %eax
	andl	$127, %eax
	addq	$32, %rsp
	popq	%rsi
	retq
.Lfunc_end2:

	.section	.debug$S,"dr"
	.p2align	2, 0x0
	.long	4                               # Debug section magic
	.long	241
	.long	.Ltmp6-.Ltmp5                   # Subsection size
.Ltmp5:
	.short	.Ltmp8-.Ltmp7                   # Record length
.Ltmp7:
	.short	4353                            # Record kind: S_OBJNAME
	.long	0                               # Signature
	.byte	0                               # Object name
	.p2align	2, 0x0
.Ltmp8:
	.short	.Ltmp10-.Ltmp9                  # Record length
.Ltmp9:
	.short	4412                            # Record kind: S_COMPILE3
	.long	0                               # Flags and language
	.short	208                             # CPUType
	.short	0                               # Frontend version
	.short	0
	.short	0
	.short	0
	.short	16006                           # Backend version
	.short	0
	.short	0
	.short	0
	.byte	0                               # Null-terminated compiler version string
	.p2align	2, 0x0
.Ltmp10:
.Ltmp6:
	.p2align	2, 0x0
	.long	246                             # Inlinee lines subsection
	.long	.Ltmp12-.Ltmp11                 # Subsection size
.Ltmp11:
	.long	0                               # Inlinee lines signature
	.long	0x1003                          # Type index of inlined function: twice
	.cv_filechecksumoffset	1               # Offset into filechecksum table
	.long	4                               # Starting line number
.Ltmp12:
	.p2align	2, 0x0
	.long	241                             # Symbol subsection for outer
	.long	.Ltmp14-.Ltmp13                 # Subsection size
.Ltmp13:
	procedure 4423, outer, .Lfunc_end0, 0x1004     # S_GPROC32_ID, function ID: outer
	.short	.Ltmp18-.Ltmp17                 # Record length
.Ltmp17:
	.short	4429                            # Record kind: S_INLINESITE
	.long	0                               # PtrParent
	.long	0                               # PtrEnd
	.long	0x1003                          # Inlinee type index: twice
	# Binary annotations, from twice's starting line 4 and outer's first byte:
	.byte	0x06, 0x02                      # line +1: 5
	.byte	0x03, 0x02                      # code +2: a range at +2
	.byte	0x04, 0x02                      # 2 bytes long
	.byte	0x06, 0x0b                      # line -5: 0
	.byte	0x03, 0x00                      # code +0: a range at +4
	.byte	0x04, 0x02                      # 2 bytes long
	.byte	0x06, 0x0c                      # line +6: 6
	.byte	0x03, 0x06                      # code +6: a range at +12
	.byte	0x04, 0x04                      # 4 bytes long: past outer's 13
	.p2align	2, 0x0
.Ltmp18:
	.short	2                               # Record length
	.short	4430                            # Record kind: S_INLINESITE_END
	procedure 4422, nested, .Lfunc_end3, 0x1004    # S_LPROC32_ID, function ID: outer's
	.short	.Ltmp22-.Ltmp21                 # Record length
.Ltmp21:
	.short	4429                            # Record kind: S_INLINESITE
	.long	0                               # PtrParent
	.long	0                               # PtrEnd
	.long	0x1003                          # Inlinee type index: twice
	.byte	0x03, 0x09                      # code +9: a range at outer's +9
	.byte	0x04, 0x02                      # 2 bytes long
	.p2align	2, 0x0
.Ltmp22:
	.short	2                               # Record length
	.short	4430                            # Record kind: S_INLINESITE_END
	end_procedure                           # nested's
	end_procedure                           # outer's
.Ltmp14:
	.p2align	2, 0x0
	.cv_linetable	0, outer, .Lfunc_end0
	.long	241                             # Symbol subsection for second
	.long	.Ltmp28-.Ltmp27                 # Subsection size
.Ltmp27:
	procedure 4423, second, .Lfunc_end1, 0x1005    # S_GPROC32_ID, function ID: second
	end_procedure
.Ltmp28:
	.p2align	2, 0x0
	.long	241                             # Symbol subsection for main_entry
	.long	.Ltmp36-.Ltmp35                 # Subsection size
.Ltmp35:
	procedure 4423, main_entry, .Lfunc_end2, 0x1008 # S_GPROC32_ID, function ID: main_entry
	end_procedure
.Ltmp36:
	.p2align	2, 0x0
	.cv_linetable	2, main_entry, .Lfunc_end2
	.cv_filechecksums                       # File index to string table offset subsection
	.cv_stringtable                         # String table

	.section	.debug$T,"dr"
	.p2align	2, 0x0
	.long	4                               # Debug section magic
	# ArgList (0x1000)
	.short	0xa                             # Record length
	.short	0x1201                          # Record kind: LF_ARGLIST
	.long	0x1                             # NumArgs
	.long	0x75                            # Argument: unsigned
	# Procedure (0x1001)
	.short	0xe                             # Record length
	.short	0x1008                          # Record kind: LF_PROCEDURE
	.long	0x75                            # ReturnType: unsigned
	.byte	0x0                             # CallingConvention: NearC
	.byte	0x0                             # FunctionOptions
	.short	0x1                             # NumParameters
	.long	0x1000                          # ArgListType: (unsigned)
	# StringId (0x1002)
	.short	0xa                             # Record length
	.short	0x1605                          # Record kind: LF_STRING_ID
	.long	0x0                             # Id
	.byte	0                               # StringData: empty
	.byte	243
	.byte	242
	.byte	241
	# FuncId (0x1003)
	.short	0x12                            # Record length
	.short	0x1601                          # Record kind: LF_FUNC_ID
	.long	0x1002                          # ParentScope: the empty string
	.long	0x1001                          # FunctionType: unsigned (unsigned)
	.asciz	"twice"                         # Name
	.byte	242
	.byte	241
	# FuncId (0x1004)
	.short	0x12                            # Record length
	.short	0x1601                          # Record kind: LF_FUNC_ID
	.long	0x0                             # ParentScope
	.long	0x1001                          # FunctionType: unsigned (unsigned)
	.asciz	"outer"                         # Name
	.byte	242
	.byte	241
	# FuncId (0x1005)
	.short	0x12                            # Record length
	.short	0x1601                          # Record kind: LF_FUNC_ID
	.long	0x0                             # ParentScope
	.long	0x1001                          # FunctionType: unsigned (unsigned)
	.asciz	"second"                        # Name
	.byte	241
	# ArgList (0x1006)
	.short	0x6                             # Record length
	.short	0x1201                          # Record kind: LF_ARGLIST
	.long	0x0                             # NumArgs
	# Procedure (0x1007)
	.short	0xe                             # Record length
	.short	0x1008                          # Record kind: LF_PROCEDURE
	.long	0x74                            # ReturnType: int
	.byte	0x0                             # CallingConvention: NearC
	.byte	0x0                             # FunctionOptions
	.short	0x0                             # NumParameters
	.long	0x1006                          # ArgListType: ()
	# FuncId (0x1008)
	.short	0x16                            # Record length
	.short	0x1601                          # Record kind: LF_FUNC_ID
	.long	0x0                             # ParentScope
	.long	0x1007                          # FunctionType: int ()
	.asciz	"main_entry"                    # Name
	.byte	241
