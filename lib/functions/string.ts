// (in progress) registers the string functions
