// (in progress) registers the object functions
