// (in progress) registers the convert functions
