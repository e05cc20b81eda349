"""The command that installs system packages with each package manager the workbench meets (Debian and Ubuntu: apt;
Amazon Linux 2: yum; Amazon Linux 2023, Fedora, RHEL: dnf)."""

INSTALL = {
    "apt": "sudo apt-get install -y {}",
    "yum": "sudo yum install -y {}",
    "dnf": "sudo dnf install -y {}",
}
