"""Speaks UNO to a running LibreOffice listener (office-listener.ts starts it and runs this script).

  uno-convert.py ready <pipe>                  waits until the listener answers
  uno-convert.py convert <pipe> <input> <pdf>  converts one document to PDF

Exit codes, read by office-listener.ts: 0 done, 2 LibreOffice did not read the file as a document,
3 the listener cannot be reached, 4 python3-uno is missing, 1 anything else (LibreOffice failed mid-way).
"""

import sys
import time

try:
    import uno
    from com.sun.star.beans import PropertyValue
    from com.sun.star.connection import NoConnectException
    from com.sun.star.io import IOException
    from com.sun.star.lang import IllegalArgumentException
    from com.sun.star.uno import RuntimeException
except ImportError as error:
    print(f"cannot load the UNO bridge ({error}): install python3-uno", file=sys.stderr)
    sys.exit(4)

# Documents are only read: no macros, no refreshing of links to other files.
NEVER_EXECUTE = 0
NO_UPDATE = 0


def props(**values):
    return tuple(PropertyValue(Name=name, Value=value) for name, value in values.items())


def desktop_of(pipe):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    context = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
    return context.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", context)


def wait_ready(pipe):
    # The caller bounds the wait and kills this process. The listener takes seconds to open its pipe, and may take
    # a connection before its desktop is up.
    while True:
        try:
            desktop_of(pipe)
            return
        except (NoConnectException, RuntimeException):
            time.sleep(0.05)


def convert(pipe, source, target):
    try:
        desktop = desktop_of(pipe)
    except NoConnectException as error:
        print(error.Message, file=sys.stderr)
        sys.exit(3)
    options = props(Hidden=True, ReadOnly=True, MacroExecutionMode=NEVER_EXECUTE, UpdateDocMode=NO_UPDATE)
    try:
        document = desktop.loadComponentFromURL(uno.systemPathToFileUrl(source), "_blank", 0, options)
    except (IllegalArgumentException, IOException) as error:
        print(error.Message, file=sys.stderr)
        sys.exit(2)
    if document is None:
        sys.exit(2)
    try:
        document.storeToURL(uno.systemPathToFileUrl(target), props(FilterName="writer_pdf_Export"))
    finally:
        document.close(True)


def main(argv):
    if len(argv) == 3 and argv[1] == "ready":
        wait_ready(argv[2])
    elif len(argv) == 5 and argv[1] == "convert":
        convert(argv[2], argv[3], argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main(sys.argv)
