@_exported import WCSApi2
